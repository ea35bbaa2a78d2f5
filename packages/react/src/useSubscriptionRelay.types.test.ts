import { createTRPCClient, httpLink } from '@trpc/client';
import { initTRPC } from '@trpc/server';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { EventMeta } from '@streamgate/client';
import type { RelaySubscription } from '@streamgate/protocol';
import { useSubscriptionRelay } from './useSubscriptionRelay.js';
import type { InferRelayProcedurePayload } from './tokenProcedures.js';

type PriceTick = { pair: string; price: number; at: Date };

// A real router: the payload type travels only in the token procedure's output type.
const t = initTRPC.create();
const router = t.router({
  demo: t.router({
    token: t.procedure
      .input((raw: unknown) => raw as { pair: string })
      .query(({ input }): RelaySubscription<PriceTick> => ({
        token: 'jwt',
        stream: `prices:${input.pair}`,
        expiresAt: Date.now() + 60_000,
      })),
    count: t.procedure.query((): RelaySubscription<number> => ({ token: 'jwt', stream: 'count', expiresAt: 0 })),
  }),
});
// Never used to send a request: only its type matters here.
const trpc = createTRPCClient<typeof router>({ links: [httpLink({ url: 'http://127.0.0.1:1/trpc' })] });

// Hooks may not run outside a component, so the calls live in functions that are type-checked
// (by tsc) but never invoked.
describe('useSubscriptionRelay types', () => {
  it('infers the payload from a tRPC token procedure, with no cast', async () => {
    const token = await t.createCallerFactory(router)({}).demo.token({ pair: 'ETH-USD' });
    expect(token.stream).toBe('prices:ETH-USD');

    const typed = () =>
      useSubscriptionRelay({
        query: trpc.demo.token,
        input: { pair: 'ETH-USD' },
        onSubscriptionData: (data, meta) => {
          // tRPC's output inference turns the Date into its JSON form, as the wire does.
          expectTypeOf(data).toEqualTypeOf<{ pair: string; price: number; at: string }>();
          expectTypeOf(meta).toEqualTypeOf<EventMeta>();
        },
      });
    expectTypeOf(typed).toBeFunction();
    expectTypeOf<InferRelayProcedurePayload<typeof trpc.demo.count>>().toEqualTypeOf<number>();
  });

  it('rejects a callback typed for another payload, and a wrong input', () => {
    const wrongPayload = () =>
      useSubscriptionRelay({
        query: trpc.demo.count,
        input: undefined,
        // @ts-expect-error the stream carries numbers, so a string callback does not fit
        onSubscriptionData: (data: string) => data.length,
      });
    const wrongInput = () =>
      useSubscriptionRelay({
        query: trpc.demo.token,
        // @ts-expect-error the procedure's input is { pair: string }
        input: { pair: 42 },
        onSubscriptionData: () => undefined,
      });
    expectTypeOf(wrongPayload).toBeFunction();
    expectTypeOf(wrongInput).toBeFunction();
  });
});
