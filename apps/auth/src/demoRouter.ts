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

const t = initTRPC.create();

const tokenInput = z.object({
  stream: z.string().min(1).max(150),
  user: z.string().min(1).max(256),
});

/**
 * The router the local fleet and end-to-end tests use. A product's router looks the same, with
 * its real authorization in `authorize`.
 */
export function createDemoRouter({ issuer, observer }: { issuer: TokenIssuer; observer?: RelayTokenObserver }) {
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
