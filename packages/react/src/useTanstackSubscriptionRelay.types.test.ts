import { createTRPCContext } from '@trpc/tanstack-react-query';
import { initTRPC } from '@trpc/server';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { EventMeta } from '@streamgate/client';
import type { RelaySubscription } from '@streamgate/protocol';
import { useSubscriptionRelay } from './useTanstackSubscriptionRelay.js';

type PriceTick = { pair: string; price: number; at: Date };

const t = initTRPC.create();
const router = t.router({
  demo: t.router({
    token: t.procedure
      .input((raw: unknown) => raw as { pair: string })
      .query(({ input }): RelaySubscription<PriceTick> => ({ token: 'jwt', stream: `prices:${input.pair}`, expiresAt: 0 })),
    count: t.procedure.query((): RelaySubscription<number> => ({ token: 'jwt', stream: 'count', expiresAt: 0 })),
    plain: t.procedure.query(() => 'not a token'),
  }),
});
const { useTRPC } = createTRPCContext<typeof router>();

// Hooks may not run outside a component: these functions are type-checked, never invoked.
describe('useSubscriptionRelay with a useTRPC() procedure from @trpc/tanstack-react-query', () => {
  it('infers input and payload from the procedure, with no cast', async () => {
    expect(await t.createCallerFactory(router)({}).demo.count()).toMatchObject({ stream: 'count' });
    const typed = () => {
      const trpc = useTRPC();
      return useSubscriptionRelay({
        queryOptions: trpc.demo.token,
        input: { pair: 'ETH-USD' },
        onSubscriptionData: (data, meta) => {
          expectTypeOf(data).toEqualTypeOf<{ pair: string; price: number; at: string }>();
          expectTypeOf(meta).toEqualTypeOf<EventMeta>();
        },
      });
    };
    expectTypeOf(typed).toBeFunction();
  });

  it('rejects a callback for another payload, a wrong input and a procedure that mints no token', () => {
    const wrong = () => {
      const trpc = useTRPC();
      useSubscriptionRelay({
        queryOptions: trpc.demo.count,
        input: undefined,
        // @ts-expect-error the stream carries numbers, so a string callback does not fit
        onSubscriptionData: (data: string) => data.length,
      });
      useSubscriptionRelay({
        queryOptions: trpc.demo.token,
        // @ts-expect-error the procedure's input is { pair: string }
        input: { pair: 42 },
        onSubscriptionData: () => undefined,
      });
      useSubscriptionRelay({
        // @ts-expect-error the procedure returns a string, not a RelaySubscription
        queryOptions: trpc.demo.plain,
        input: undefined,
        onSubscriptionData: () => undefined,
      });
    };
    expectTypeOf(wrong).toBeFunction();
  });
});
