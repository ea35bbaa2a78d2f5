import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import type { Recorder } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';

const getFleet = useFleet({ relays: 2 });

describe('the relay path', () => {
  it('delivers 10,000 events to 100 clients over two relay processes, in order, none lost or repeated', async () => {
    const fleet = getFleet();
    const stream = 'fanout-10k';
    const recorders: Recorder[] = [];
    for (let i = 0; i < 100; i++) {
      const relay = fleet.relays[i % 2];
      if (relay === undefined) throw new Error('fleet has no relay');
      recorders.push(record(fleet, [relay.url], stream, { user: `user-${i}` }));
    }
    try {
      await waitFor(() => recorders.every((r) => r.sub.state === 'live'), {
        timeoutMs: 30_000,
        message: 'not every client went live',
      });
      const total = 10_000;
      await publishSequence(fleet.redis.client(), stream, 0, total);
      await waitFor(() => recorders.every((r) => r.seqs.length >= total), {
        timeoutMs: 60_000,
        message: 'not every client received all 10,000 events',
      });
      for (const r of recorders) {
        expect(gapsAndDuplicates(r.seqs, 0, total)).toBeNull();
        expect(r.errors).toEqual([]);
      }
      // Both relays served clients, and each read every entry once from Redis, not once per client.
      for (const relay of fleet.relays) {
        const text = await relay.metrics();
        expect(text).toMatch(/streamgate_relay_connections 50\b/);
        expect(text).toMatch(/streamgate_relay_deliveries_total\{path="live"\} 500000\b/);
      }
    } finally {
      for (const r of recorders) r.close();
    }
  });
});
