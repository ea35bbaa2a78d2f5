import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { RelayClient } from '@streamgate/client';
import { RelayProvider, useSubscriptionRelay } from '@streamgate/react';
import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import type { AppRouter, PriceTick } from './router';

const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/trpc' })] });
const relay = new RelayClient({ urls: ['ws://localhost:8080/v1/ws'] });

function Prices({ pair }: { pair: string }) {
  const [last, setLast] = useState<{ tick: PriceTick; id: StreamId }>();
  const { state } = useSubscriptionRelay({
    query: trpc.prices.token,
    input: { pair },
    onSubscriptionData: (tick, { id }) => {
      // `tick` is PriceTick from the router type alone: no annotation, no cast.
      setLast((prev) => (prev === undefined || compareStreamIds(id, prev.id) > 0 ? { tick, id } : prev));
    },
  });
  return (
    <p>
      {pair} {state}: {last?.tick.price ?? '…'}
    </p>
  );
}

/** Never rendered: it holds the line that must fail to typecheck if payload inference broke. */
export function WrongPayload() {
  useSubscriptionRelay({
    query: trpc.prices.token,
    input: { pair: 'ETH-USD' },
    // @ts-expect-error the payload is PriceTick, so a callback taking a string must not typecheck
    onSubscriptionData: (tick: string) => tick.toUpperCase(),
  });
  return null;
}

const root = document.getElementById('root');
if (root !== null) {
  createRoot(root).render(
    <StrictMode>
      <RelayProvider client={relay}>
        <Prices pair="ETH-USD" />
      </RelayProvider>
    </StrictMode>,
  );
}
