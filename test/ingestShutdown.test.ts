import { describe, expect, it } from 'vitest';
import { spawnIngest, startRedis } from '@streamgate/testkit';
import { FAST_WORKER_ENV, holdDemand } from './support/ingestHarness.js';

// A worker closing on SIGTERM releases its leases; with its Redis frozen (a partition: sockets
// open, nothing answered) the release waited for an answer that never came, until the pod's
// SIGKILL (still running 70 s after the signal). Past a lease TTL the others took over anyway.
const LEASE_TTL_MS = Number(FAST_WORKER_ENV.INGEST_LEASE_TTL_MS);
/** Process exit and timer lateness on a loaded 2-core machine. */
const SLACK_MS = 3_000;

describe('an ingest worker told to stop while its Redis does not answer', () => {
  it('exits within a lease TTL of SIGTERM, saying it gave up', async () => {
    const redis = await startRedis();
    const worker = await spawnIngest({
      name: 'ingest-shutdown',
      redisUrl: redis.url,
      topology: {
        venues: { sim: { mqttUrl: 'mqtt://127.0.0.1:1', httpUrl: 'http://127.0.0.1:1', appKey: 'k', symbols: ['AAA'] } },
      },
      env: FAST_WORKER_ENV,
    });
    const demand = holdDemand(redis.client(), ['md.sim.AAA']);
    const pid = redis.service?.pid;
    if (pid === undefined) throw new Error('redis is not running');
    let frozen = false;
    try {
      // It holds the symbol's lease (and the venue's) when its Redis goes.
      await worker.service.waitForLine(/"lease acquired"/, 15_000);
      demand.stop();
      // Frozen, not closed: its sockets stay open and every command waits, as behind a partition.
      process.kill(pid, 'SIGSTOP');
      frozen = true;
      const signalledAt = Date.now();
      worker.service.signal('SIGTERM');
      const status = await Promise.race([
        worker.service.exited,
        new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), LEASE_TTL_MS + SLACK_MS).unref()),
      ]);
      const tookMs = Date.now() - signalledAt;
      console.log(`ingest shutdown with its Redis frozen: ${JSON.stringify(status)} after ${tookMs} ms (budget ${LEASE_TTL_MS} ms)`);
      expect(status).toEqual({ code: 1, signal: null });
      expect(tookMs).toBeGreaterThanOrEqual(LEASE_TTL_MS - 100);
      expect(worker.service.lines.some((l) => l.includes('shutdown did not finish within its budget'))).toBe(true);
    } finally {
      if (frozen) process.kill(pid, 'SIGCONT');
      await worker.service.stop();
      await redis.stop();
    }
  });
});
