import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunContext } from '@streamgate/ingest-core';
import { MemoryLeaseStore, MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import { busiestWindow, startVenueSim, waitFor } from '@streamgate/testkit';
import { ingestTopologySchema } from '../config.js';
import { createVenueAdapter } from './createVenueAdapter.js';
import type { VenueNotice } from './VenueNotice.js';
import { VenueKeyShares } from './VenueKeyShares.js';
import { VenueMetrics } from './VenueMetrics.js';

const APP_KEY = 'sim-app-key';
const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const symbols = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);

describe('createVenueAdapter', () => {
  it('two topology venues on one app key share its 5 sessions and its rate: never more together, no refusal, no 429', async () => {
    // The venue's own limit is a little above the configured one, so only a worker sending
    // faster than configured meets it.
    const sim = await startVenueSim({ publishIntervalMs: 50, rateLimit: { perSecond: 7, burst: 7 } });
    cleanups.push(() => sim.close());
    const venue = (prefix: string) => ({
      mqttUrl: sim.mqttUrl,
      httpUrl: sim.httpUrl,
      appKey: APP_KEY,
      symbols: symbols(prefix, 120),
      // 120 symbols at 40 a session: three sessions each, six together, one more than the key has.
      maxSymbolsPerSession: 40,
      reassertIntervalMs: 400,
      reconcileTimeoutMs: 5_000,
      callTimeoutMs: 3_000,
      coverageStaleMs: 600,
      connectTimeoutMs: 2_000,
      rateLimit: { perSecond: 5, burst: 5 },
    });
    // The trailing slash is the same endpoint.
    const topology = ingestTopologySchema.parse({
      venues: { east: venue('E'), west: { ...venue('W'), httpUrl: `${sim.httpUrl}/` } },
    });
    const writer = new MemoryStreamWriter();
    const leases = new MemoryLeaseStore(writer, Date.now);
    const notices: VenueNotice[] = [];
    const shares = new VenueKeyShares();
    const adapters = Object.entries(topology.venues).map(([name, config]) => {
      const { adapter, keys } = createVenueAdapter(name, config, {
        workerId: 'worker-a',
        leases,
        writer,
        leaseTtlMs: 60_000,
        metrics: new VenueMetrics(new Registry()),
        log: quietLog,
        shares,
      });
      cleanups.push(() => adapter.close());
      return { name, adapter, keys };
    });
    // Collected from the control streams, as a consumer reads them.
    const noticesOf = () =>
      ['md.east._control', 'md.west._control'].flatMap((key) =>
        (writer.streams.get(key) ?? []).map((e) => JSON.parse(e.data) as VenueNotice & { venue: string }),
      );

    for (const { adapter, keys } of adapters) {
      for (const key of keys) {
        const lease = await leases.acquire(key, 'worker-a', 60_000);
        if (lease === null) throw new Error(`${key} is held`);
        const ctx: RunContext = {
          key,
          state: new Map(),
          signal: new AbortController().signal,
          write: (batch) => writer.write({ key, token: lease.token }, batch),
        };
        adapter.start(ctx);
      }
    }

    const sessionsOpen = () => adapters.reduce((n, { adapter }) => n + (adapter.activeFeed?.status().shards.length ?? 0), 0);
    let mostOpen = 0;
    let settledAt: number | undefined;
    await waitFor(
      () => {
        mostOpen = Math.max(mostOpen, sessionsOpen());
        const held = sim.sessions().reduce((n, s) => n + s.subscribed.length, 0);
        // Five sessions of 40 hold 200 of the 240; then three seconds of re-asserts at full pace.
        if (held === 200 && settledAt === undefined) settledAt = Date.now();
        return settledAt !== undefined && Date.now() - settledAt >= 3_000;
      },
      { timeoutMs: 30_000, message: 'five full sessions, then three seconds of re-asserts' },
    );

    expect(mostOpen).toBeLessThanOrEqual(5);
    expect(sim.refusedConnects()).toEqual([]);
    expect(sim.sessions().filter((s) => s.appKey === APP_KEY)).toHaveLength(5);
    const calls = sim.calls();
    expect(calls.filter((c) => c.status === 429)).toEqual([]);
    // One bucket of 5 tokens refilled at 5 a second: at most 10 calls in any second (+1 for
    // arrival jitter), where two buckets would allow 20.
    expect(
      busiestWindow(
        calls.map((c) => c.receivedAt),
        1_000,
      ),
    ).toBeLessThanOrEqual(11);
    // What did not fit is reported as capacity, not hidden.
    notices.push(...noticesOf());
    const unplaced = notices.flatMap((n) => (n.type === 'capacity' ? n.symbols : []));
    expect(new Set(unplaced).size).toBe(40);
  });
});
