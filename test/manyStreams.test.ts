import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { createPublisher } from '@streamgate/server';
import { demoStream } from '@streamgate/auth';
import { useFleet } from './support/startFleet.js';

const getFleet = useFleet({ relays: 1 });

describe('many streams on one relay', () => {
  it('serves 1,000 streams with 3 clients each live through a handful of Redis connections', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const streams = Array.from({ length: 1_000 }, (_, i) => `many-${i}`);
    const perStream = 3;
    const subsPerSocket = 100;
    // received[stream] counts the events each of its subscribers got.
    const received = new Map<string, number>();
    const clients: RelayClient[] = [];
    const subs: Array<{ state: string }> = [];
    let slot = 0;
    let client: RelayClient | null = null;
    for (let copy = 0; copy < perStream; copy++) {
      for (const stream of streams) {
        if (slot % subsPerSocket === 0) {
          client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
          clients.push(client);
        }
        slot++;
        if (client === null) throw new Error('unreachable');
        subs.push(
          client.subscribe({
            getToken: () => fleet.trpc.demo.token.query({ stream, user: `viewer-${copy}` }),
            onEvent: () => received.set(stream, (received.get(stream) ?? 0) + 1),
          }),
        );
      }
    }
    try {
      await waitFor(() => subs.every((s) => s.state === 'live'), {
        timeoutMs: 60_000,
        message: () => `not every subscription went live (${subs.filter((s) => s.state === 'live').length}/${subs.length})`,
      });
      const publisher = createPublisher({ redis: fleet.redis.client() });
      const results = await Promise.all(
        streams.map((stream, i) => publisher.publish(demoStream.for(stream), { seq: i, text: stream, at: new Date().toISOString() })),
      );
      expect(results.every((r) => r.ok)).toBe(true);
      await waitFor(() => streams.every((s) => received.get(s) === perStream), {
        timeoutMs: 30_000,
        message: () =>
          `not every stream reached its ${perStream} clients (${[...received.values()].filter((n) => n === perStream).length}/1000)`,
      });

      const list = String(await fleet.redis.client().call('CLIENT', 'LIST'));
      const relayConnections = list.split('\n').filter((line) => /name=streamgate-relay:/.test(line));
      // One command connection and one blocking reader per 1,000 streams.
      expect(relayConnections.length).toBeGreaterThanOrEqual(2);
      expect(relayConnections.length).toBeLessThanOrEqual(4);
      expect(await relay.metrics()).toMatch(/streamgate_relay_streams 1000\b/);
    } finally {
      for (const c of clients) c.close();
    }
  });
});
