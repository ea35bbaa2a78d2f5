import { pino } from 'pino';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relaySnapshotSchema } from '@streamgate/ops';
import { freePort, startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { RelayMetrics } from '../RelayMetrics.js';
import type { RelayOpsState } from './RelaySnapshotCollector.js';
import { startRelayOpsPublisher } from './startRelayOpsPublisher.js';

const state: RelayOpsState = {
  pod: 'relay-ops-test',
  startedAt: Date.now(),
  ready: () => true,
  connections: () => 1,
  subscriptions: () => 1,
  streamsWatched: () => 1,
  deliveriesTotal: () => 0,
  refusals: () => [],
  readModes: () => [],
  drain: () => null,
  drainOutcome: () => null,
};

/** A pino logger writing into an array, to see what was logged. */
function capture(): { log: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
  return { log, lines };
}

async function counterValue(metrics: RelayMetrics, name: string): Promise<number> {
  const text = await metrics.registry.metrics();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('startRelayOpsPublisher', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('XADDs schema-valid snapshots in the entry format, and a last one on request', async () => {
    const metrics = new RelayMetrics();
    const publisher = startRelayOpsPublisher({
      redisUrl: redis.url,
      stream: 'test:ops',
      username: undefined,
      password: undefined,
      state,
      metrics,
      log: capture().log,
      intervalMs: 50,
    });
    try {
      await waitFor(async () => (await redis.client().xlen('test:ops')) >= 3, { timeoutMs: 5_000, message: 'no snapshots written' });
      await publisher.publishLast();
      const written = await redis.client().xlen('test:ops');
      const [, fields] = (await redis.client().xrevrange('test:ops', '+', '-', 'COUNT', 1))[0] ?? ['', []];
      expect(fields[0]).toBe('data');
      expect(relaySnapshotSchema.parse(JSON.parse(fields[1] ?? ''))).toMatchObject({ pod: 'relay-ops-test', kind: 'relay' });
      expect(await counterValue(metrics, 'streamgate_relay_ops_snapshots_total')).toBe(written);
    } finally {
      await publisher.close();
    }
  });

  it('counts each failure, logs only when publishing starts failing, and never throws', async () => {
    const metrics = new RelayMetrics();
    const { log, lines } = capture();
    const publisher = startRelayOpsPublisher({
      redisUrl: `redis://127.0.0.1:${await freePort()}/0`,
      stream: 'test:ops',
      username: undefined,
      password: undefined,
      state,
      metrics,
      log,
      intervalMs: 50,
    });
    try {
      await waitFor(async () => (await counterValue(metrics, 'streamgate_relay_ops_snapshot_failures_total{code="sink_failed"}')) >= 3, {
        timeoutMs: 15_000,
        message: 'failures not counted',
      });
      expect(lines.filter((l) => l.msg.startsWith('operations snapshot not written'))).toHaveLength(1);
    } finally {
      await publisher.close();
    }
  });
});
