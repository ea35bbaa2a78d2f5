// A product backend's router on the latest @trpc/server, its schemas written with its own schema
// library (src/schemas.ts): @streamgate/server takes them as Standard Schemas.
import { initTRPC, TRPCError } from '@trpc/server';
import {
  createPublisher,
  createTokenIssuer,
  defineStream,
  generateSigningKey,
  relayTokenProcedure,
  SigningKeySet,
} from '@streamgate/server';
import { priceRequest, priceTick } from './schemas.js';

export const ISSUER = 'https://auth.example';
export const AUDIENCE = 'streamgate-relay';
export const REDIS = 'redis://Streams.internal:6379';

/** The stream family: `prices.for(pair)` is the Redis stream `prices:<pair>`; its payload type is the schema's output. */
export const prices = defineStream('prices', priceTick);

const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'backend-k1')]);
if (!loaded.ok) throw new Error(loaded.error.message);
export const keys = loaded.keys;
const issuer = createTokenIssuer({ keys, issuer: ISSUER, audience: AUDIENCE, redis: REDIS });

const t = initTRPC.context<{ user: string | null }>().create();
const signedIn = t.procedure.use(({ ctx, next }) => {
  if (ctx.user === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in first' });
  return next({ ctx: { user: ctx.user } });
});

export const appRouter = t.router({
  prices: t.router({
    token: relayTokenProcedure(signedIn, {
      input: priceRequest,
      // ctx.user is a string here: the middleware narrowed it.
      authorize: (ctx, input) => Promise.resolve(input.pair.endsWith('USD') ? { subject: ctx.user } : { denied: 'USD pairs only' }),
      stream: (input) => prices.for(input.pair),
      issuer,
      ttlSeconds: 120,
    }),
  }),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);

/**
 * Never connects in the check: only payloads the schema refuses are published, and those are
 * refused before any write. The list mixes Redis and JetStream (the NATS client is loaded only on
 * a publish placed on the JetStream target), so the NATS options typecheck with skipLibCheck false.
 */
export const publisher = createPublisher({
  targets: ['redis://127.0.0.1:1/0', 'nats://127.0.0.1:1/STREAMGATE'],
  natsUsername: 'backend',
  natsPassword: 'unused-in-the-check',
  timeoutMs: 1_000,
});
