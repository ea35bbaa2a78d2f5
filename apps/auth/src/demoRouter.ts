import { initTRPC } from '@trpc/server';
import { z } from 'zod';
import { defineStream } from '@streamgate/protocol';
import { relayTokenProcedure } from '@streamgate/server';
import type { RelayTokenObserver, TokenIssuer } from '@streamgate/server';

/** One event on a demo stream. */
export type DemoEvent = { seq: number; text: string; at: string };

/** The demo streams: `demoStream.for(name)` is the Redis key `demo:<name>`. */
export const demoStream = defineStream<DemoEvent>('demo');

/** The user the demo authorization refuses, so tests can exercise denial. */
export const DENIED_DEMO_USER = 'mallory';

const tokenInput = z.object({
  stream: z.string().min(1).max(150),
  user: z.string().min(1).max(256),
});

export type DemoRouterOptions = {
  issuer: TokenIssuer;
  observer?: RelayTokenObserver;
  /** Put stack traces into error responses (development only); default false. */
  exposeStackTraces?: boolean;
};

/**
 * The router the local fleet and end-to-end tests use, served only with AUTH_DEMO_ROUTER=true.
 * A product's router looks the same, with its real authorization in `authorize`
 * (docs/backend-guide.md).
 */
export function createDemoRouter({ issuer, observer, exposeStackTraces = false }: DemoRouterOptions) {
  // tRPC's own default shows stacks whenever NODE_ENV is not "production", staging included.
  const t = initTRPC.create({ isDev: exposeStackTraces });
  return t.router({
    demo: t.router({
      token: relayTokenProcedure(t.procedure, {
        input: tokenInput,
        authorize: (_ctx, input) =>
          Promise.resolve(
            input.user === DENIED_DEMO_USER ? { denied: `user ${input.user} may not read demo streams` } : { subject: input.user },
          ),
        stream: (input) => demoStream.for(input.stream),
        issuer,
        ...(observer === undefined ? {} : { observer }),
      }),
    }),
  });
}

export type DemoRouter = ReturnType<typeof createDemoRouter>;
