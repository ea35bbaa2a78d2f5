// @vitest-environment jsdom
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { useState } from 'react';
import { cleanup, render, screen, waitFor as waitForDom } from '@testing-library/react';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { RelayProvider, useSubscriptionRelay } from '@streamgate/react';
import type { DemoEvent } from '@streamgate/auth';
import { useFleet } from './support/startFleet.js';
import { publishSequence } from './support/publishSequence.js';

const getFleet = useFleet({ relays: 1 });
afterAll(() => cleanup());

function Ticker({ stream }: { stream: string }) {
  const [events, setEvents] = useState<DemoEvent[]>([]);
  const { state } = useSubscriptionRelay({
    query: getFleet().trpc.demo.token,
    input: { stream, user: 'ui' },
    onSubscriptionData: (event) => {
      // The payload type comes from the tRPC procedure's RelaySubscription<DemoEvent>, no cast.
      expectTypeOf(event).toEqualTypeOf<DemoEvent>();
      setEvents((previous) => [...previous, event]);
    },
  });
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

describe('useSubscriptionRelay in a DOM', () => {
  it('renders events from a real relay as they are published', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    // jsdom's WebSocket cannot load its `ws` backend under vitest; the DOM is jsdom's, the socket
    // is a real one from `ws`.
    const client = new RelayClient({ urls: [relay.url], WebSocket });
    render(
      <RelayProvider client={client}>
        <Ticker stream="react-dom" />
      </RelayProvider>,
    );
    await waitForDom(() => expect(screen.getByTestId('state').textContent).toBe('live'), { timeout: 15_000 });
    await publishSequence(fleet.redis.client(), 'react-dom', 0, 5);
    await waitForDom(() => expect(screen.getAllByRole('listitem')).toHaveLength(5), { timeout: 15_000 });
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual([0, 1, 2, 3, 4].map((i) => `event ${i}`));
    cleanup();
    client.close();
  });
});
