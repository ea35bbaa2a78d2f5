// The product backend's router, as a consumer app imports its type. Only its type reaches the
// browser code (`import type`), so the bundle carries no server code.
import { initTRPC } from '@trpc/server';
import type { RelaySubscription } from '@streamgate/protocol';

export type Tick = { seq: number; text: string };

const t = initTRPC.create();

export const appRouter = t.router({
  demo: t.router({
    token: t.procedure
      .input((raw: unknown) => {
        if (typeof raw !== 'object' || raw === null || !('stream' in raw) || typeof raw.stream !== 'string') {
          throw new Error('input: { stream: string }');
        }
        return { stream: raw.stream };
      })
      .query(({ input }): RelaySubscription<Tick> => ({ token: 'jwt', stream: `demo:${input.stream}`, expiresAt: Date.now() + 60_000 })),
  }),
});

export type AppRouter = typeof appRouter;
