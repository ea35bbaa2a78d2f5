// @vitest-environment jsdom
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { useState } from 'react';
import type { ReactNode } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { httpBatchLink } from '@trpc/client';
import { createTRPCReact } from '@trpc/react-query';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { cleanup, render, screen, waitFor as waitForDom } from '@testing-library/react';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { RelayProvider, useSubscriptionRelay } from '@streamgate/react';
import { useSubscriptionRelay as useTanstackSubscriptionRelay } from '@streamgate/react/tanstack';
import type { DemoEvent, DemoRouter } from '@streamgate/auth';
import { useFleet } from './support/startFleet.js';
import { publishSequence } from './support/publishSequence.js';

const getFleet = useFleet({ relays: 1 });
afterAll(() => cleanup());

const classic = createTRPCReact<DemoRouter>();
const tanstack = createTRPCContext<DemoRouter>();
type Integration = 'vanilla' | 'classic' | 'tanstack';

/** One hook call per integration; each component keeps its integration for its lifetime. */
function useDemoStream(integration: Integration, stream: string, onEvent: (event: DemoEvent) => void) {
  const input = { stream, user: 'ui' };
  const onSubscriptionData = (event: DemoEvent) => {
    // The payload type comes from the tRPC procedure's RelaySubscription<DemoEvent>, no cast.
    expectTypeOf(event).toEqualTypeOf<DemoEvent>();
    onEvent(event);
  };
  if (integration === 'vanilla') return useSubscriptionRelay({ query: getFleet().trpc.demo.token, input, onSubscriptionData });
  if (integration === 'classic') return useSubscriptionRelay({ useQuery: classic.demo.token, input, onSubscriptionData });
  return useTanstackSubscriptionRelay({ queryOptions: tanstack.useTRPC().demo.token, input, onSubscriptionData });
}

function Ticker({ stream, integration = 'vanilla' }: { stream: string; integration?: Integration }) {
  const [events, setEvents] = useState<DemoEvent[]>([]);
  const { state } = useDemoStream(integration, stream, (event) => setEvents((previous) => [...previous, event]));
  return (
    <section>
      <p data-testid="state">{state}</p>
      <ol>
        {events.map((e) => (
          <li key={e.seq}>{e.text}</li>
        ))}
      </ol>
    </section>
  );
}

/** The providers each integration needs, all talking to the fleet's real auth process over HTTP. */
function Providers({ client, children }: { client: RelayClient; children?: ReactNode }) {
  const fleet = getFleet();
  const [queryClient] = useState(() => new QueryClient());
  const [classicClient] = useState(() => classic.createClient({ links: [httpBatchLink({ url: `${fleet.authUrl}/trpc` })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <classic.Provider client={classicClient} queryClient={queryClient}>
        <tanstack.TRPCProvider trpcClient={fleet.trpc} queryClient={queryClient}>
          <RelayProvider client={client}>{children}</RelayProvider>
        </tanstack.TRPCProvider>
      </classic.Provider>
    </QueryClientProvider>
  );
}

describe.each<Integration>(['vanilla', 'classic', 'tanstack'])('useSubscriptionRelay (%s tRPC) in a DOM', (integration) => {
  it('renders events from a real relay as they are published', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    // jsdom's WebSocket cannot load its `ws` backend under vitest; the DOM is jsdom's, the socket
    // is a real one from `ws`.
    const client = new RelayClient({ urls: [relay.url], WebSocket });
    const stream = `react-dom-${integration}`;
    render(
      <Providers client={client}>
        <Ticker stream={stream} integration={integration} />
      </Providers>,
    );
    await waitForDom(() => expect(screen.getByTestId('state').textContent).toBe('live'), { timeout: 15_000 });
    await publishSequence(fleet.redis.client(), stream, 0, 5);
    await waitForDom(() => expect(screen.getAllByRole('listitem')).toHaveLength(5), { timeout: 15_000 });
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual([0, 1, 2, 3, 4].map((i) => `event ${i}`));
    cleanup();
    client.close();
  });
});
