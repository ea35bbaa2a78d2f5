// The product's backend router, as a product writes it: only its type reaches the browser code.
import { initTRPC } from '@trpc/server';
import { createTokenIssuer, defineStream, generateSigningKey, relayTokenProcedure, SigningKeySet } from '@streamgate/server';
import { z } from 'zod';

export type PriceTick = { pair: string; price: number };

const prices = defineStream<PriceTick>('prices');
const t = initTRPC.context<{ user: string | undefined }>().create();
const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'key-1')]);
if (!loaded.ok) throw new Error(loaded.error.message);
const issuer = createTokenIssuer({
  keys: loaded.keys,
  issuer: 'https://auth.example',
  audience: 'relay',
  redis: 'redis://streams:6379/0',
});

export const appRouter = t.router({
  prices: t.router({
    token: relayTokenProcedure(t.procedure, {
      input: z.object({ pair: z.string().regex(/^[A-Z]+-[A-Z]+$/) }),
      authorize: async (ctx) => (ctx.user === undefined ? { denied: 'sign in first' } : { subject: ctx.user }),
      stream: (input) => prices.for(input.pair),
      issuer,
    }),
  }),
});

export type AppRouter = typeof appRouter;
