/**
 * The example of docs/backend-guide.md: a product's own tRPC backend that mints relay tokens.
 * Everything here is the product's (its router, its session lookup, its authorization, where it
 * keeps the signing keys); streamgate contributes `relayTokenProcedure`, the token issuer and the
 * JWKS handler. test/backendGuide.test.ts runs it against a real relay.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { CreateHTTPContextOptions } from '@trpc/server/adapters/standalone';
import { z } from 'zod';
import { createJwksHandler, createTokenIssuer, defineStream, relayTokenProcedure, SigningKeySet } from '@streamgate/server';

/** The stream family: `orderUpdates.for(orderId)` is the Redis stream `orders:<orderId>`. */
export const orderUpdates = defineStream('orders', z.object({ orderId: z.string(), status: z.string() }));

/** What the product already has: who is signed in, and who owns what. */
export interface ProductServices {
  userFromSession(sessionToken: string): Promise<{ id: string } | null>;
  ownerOfOrder(orderId: string): Promise<string | null>;
}

export interface ProductBackendOptions {
  services: ProductServices;
  /** The `auth-signing-keys` Secret's file: a JSON array of private JWKs, the first signs. */
  signingKeysFile: string;
  /** Must equal the relays' RELAY_TOKEN_ISSUER / RELAY_TOKEN_AUDIENCE. */
  issuer: string;
  audience: string;
  /** The Redis the streams live in, without credentials; one of the relays' RELAY_REDIS_ALLOWLIST. */
  redisUrl: string;
  host?: string;
  port?: number;
}

function createProductRouter(services: ProductServices, issuer: ReturnType<typeof createTokenIssuer>) {
  const createContext = async ({ req }: CreateHTTPContextOptions) => {
    const session = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return { user: session === undefined ? null : await services.userFromSession(session) };
  };
  // Stack traces only in development: tRPC's default shows them whenever NODE_ENV is not "production".
  const t = initTRPC.context<typeof createContext>().create({ isDev: process.env.NODE_ENV === 'development' });
  const signedIn = t.procedure.use(({ ctx, next }) => {
    if (ctx.user === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in first' });
    return next({ ctx: { user: ctx.user } });
  });

  const router = t.router({
    orders: t.router({
      // The product's own procedures sit beside the token procedure, behind the same middleware.
      owner: signedIn.input(z.object({ orderId: z.string() })).query(({ input }) => services.ownerOfOrder(input.orderId)),
      // One call per subscription (and per refresh); relays never call back, however often clients reconnect.
      updatesToken: relayTokenProcedure(signedIn, {
        input: z.object({ orderId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/) }),
        authorize: async (ctx, input) =>
          (await services.ownerOfOrder(input.orderId)) === ctx.user.id ? { subject: ctx.user.id } : { denied: 'not your order' },
        stream: (input) => orderUpdates.for(input.orderId),
        issuer,
      }),
    }),
  });
  return { router, createContext };
}

export type ProductRouter = ReturnType<typeof createProductRouter>['router'];

export interface ProductBackend extends AsyncDisposable {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the router at /trpc and the public keys at /.well-known/jwks.json (the relays' RELAY_JWKS_URL). */
export async function startProductBackend(options: ProductBackendOptions): Promise<ProductBackend> {
  const loaded = await SigningKeySet.fromJson(await readFile(options.signingKeysFile, 'utf8'));
  if (!loaded.ok) throw new Error(`${options.signingKeysFile}: ${loaded.error.message}`);
  const issuer = createTokenIssuer({ keys: loaded.keys, issuer: options.issuer, audience: options.audience, redis: options.redisUrl });
  const { router, createContext } = createProductRouter(options.services, issuer);
  const trpc = createHTTPHandler({ router, createContext, basePath: '/trpc/' });
  const jwks = createJwksHandler(loaded.keys, { maxAgeSeconds: 60 });

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (path.startsWith('/trpc/')) trpc(req, res);
    else if (path === '/.well-known/jwks.json') jwks(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, close, [Symbol.asyncDispose]: close };
}
