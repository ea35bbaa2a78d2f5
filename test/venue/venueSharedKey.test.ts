import { describe, expect, it } from 'vitest';
import { busiestWindow, spawnIngest, startRedis, startVenueSim, waitFor } from '@streamgate/testkit';
import { FAST_WORKER_ENV, holdDemand } from '../support/ingestHarness.js';
import { APP_KEY, symbols } from '../support/venueHarness.js';

describe('two topology venues on one app key, in an ingest worker process', () => {
  it('hold at most the key’s 5 sessions together and send within its rate: the venue refuses nothing', async () => {
    await using redis = await startRedis();
    // The venue's own limit is a little above the configured one, so only a worker sending
    // faster than configured meets it. Payloads every 200 ms: the sessions are judged, not throughput.
    await using sim = await startVenueSim({ publishIntervalMs: 200, rateLimit: { perSecond: 7, burst: 7 } });
    const venue = (prefix: string) => ({
      mqttUrl: sim.mqttUrl,
      httpUrl: sim.httpUrl,
      appKey: APP_KEY,
      symbols: symbols(120, 0, prefix),
      // 120 symbols at 40 a session: three sessions each, six together, one more than the key has.
      maxSymbolsPerSession: 40,
      reassertIntervalMs: 400,
      reconcileTimeoutMs: 2_000,
      callTimeoutMs: 3_000,
      coverageStaleMs: 1_000,
      connectTimeoutMs: 2_000,
      rateLimit: { perSecond: 5, burst: 5 },
    });
    const worker = await spawnIngest({
      name: 'venue-shared-key',
      redisUrl: redis.url,
      topology: { venues: { east: venue('E'), west: venue('W') } },
      env: FAST_WORKER_ENV,
    });
    try {
      const streams = [...symbols(120, 0, 'E').map((s) => `md.east.${s}`), ...symbols(120, 0, 'W').map((s) => `md.west.${s}`)];
      await using _demand = holdDemand(redis.client(), streams);

      // The sim lives in this process: its registry is read synchronously, every 10 ms.
      let mostSessions = 0;
      const sample = setInterval(() => {
        mostSessions = Math.max(mostSessions, sim.sessions().filter((s) => s.appKey === APP_KEY).length);
      }, 10);
      let fullAt: number | undefined;
      try {
        await waitFor(
          () => {
            const held = sim.sessions().reduce((n, s) => n + s.subscribed.length, 0);
            // Five sessions of 40 hold 200 of the 240; then three seconds of re-asserts at full pace.
            if (held === 200) fullAt ??= Date.now();
            return fullAt !== undefined && Date.now() - fullAt >= 3_000;
          },
          { timeoutMs: 60_000, message: 'five full sessions, then three seconds of re-asserts' },
        );
      } finally {
        clearInterval(sample);
      }

      expect(mostSessions).toBeLessThanOrEqual(5);
      expect(sim.refusedConnects()).toEqual([]);
      const calls = sim.calls();
      expect(calls.filter((c) => c.status === 429)).toEqual([]);
      // One bucket of 5 tokens refilled at 5 a second: at most 10 calls in any second (+1 for
      // arrival jitter), where a bucket per venue would allow 20.
      expect(
        busiestWindow(
          calls.map((c) => c.receivedAt),
          1_000,
        ),
      ).toBeLessThanOrEqual(11);

      // Each venue's own view agrees: five sessions between them, 40 symbols left unplaced.
      const status = async (name: string) =>
        (await (await fetch(`${worker.httpUrl}/venues/${name}`)).json()) as { shards: unknown[]; unplaced: string[] };
      const [east, west] = [await status('east'), await status('west')];
      expect(east.shards.length + west.shards.length).toBe(5);
      expect(east.unplaced.length + west.unplaced.length).toBe(40);
    } finally {
      await worker.service.stop();
    }
  });
});
