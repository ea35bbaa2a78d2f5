import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSnapshotSchema } from '@streamgate/ops';
import type { AuthSnapshot } from '@streamgate/ops';
import { startRedisOpsPublisher } from '@streamgate/ops/redis';
import { startRedis, startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisCluster, RedisServer } from '@streamgate/testkit';

// The one ops snapshot publisher (relay, auth and ingest use it) opens every target kind their
// config accepts: a standalone Redis and a Redis Cluster seed.

let standalone: RedisServer;
let cluster: RedisCluster;

beforeAll(async () => {
  [standalone, cluster] = await Promise.all([startRedis(), startRedisCluster({ replicasPerPrimary: 0 })]);
}, 60_000);
afterAll(async () => {
  await Promise.all([standalone?.stop(), cluster?.stop()]);
});

function snapshot(seq: number): AuthSnapshot {
  const now = Date.now();
  return {
    kind: 'auth',
    v: 1,
    pod: 'auth-targets',
    at: now,
    startedAt: now,
    seq,
    truncated: false,
    ready: true,
    tokensIssuedTotal: 0,
    tokensPerSecond: 0,
    refusals: {},
    signingKeyIds: ['k1'],
  };
}

async function publishesTo(redisUrl: string, read: (stream: string) => Promise<Array<[string, string[]]>>): Promise<void> {
  const stream = `ops:targets:${Math.random().toString(36).slice(2)}`;
  const failures: string[] = [];
  const redisErrors: string[] = [];
  let written = 0;
  const publisher = startRedisOpsPublisher({
    redisUrl,
    connectionName: 'streamgate-test-ops',
    stream,
    collect: snapshot,
    onWritten: () => (written += 1),
    // Before the connection (for a cluster, its slot map) is up, a snapshot fails rather than
    // queueing: only failures after the first write count against the publisher.
    onFailure: (failure) => {
      if (written > 0) failures.push(failure.code);
    },
    onRedisError: (error) => redisErrors.push(error.message),
    intervalMs: 50,
  });
  try {
    await waitFor(() => written >= 3, { timeoutMs: 10_000, message: `three snapshots written to ${redisUrl}` });
    await publisher.publishLast();
    const entries = await read(stream);
    expect(entries.length).toBeGreaterThanOrEqual(4);
    const seqs = entries.map(([, fields]) => {
      expect(fields[0]).toBe('data');
      return authSnapshotSchema.parse(JSON.parse(fields[1] ?? 'null')).seq;
    });
    // Contiguous from the first one written: nothing lost once the connection was up.
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] ?? 0) + i));
    expect(failures).toEqual([]);
    expect(redisErrors).toEqual([]);
  } finally {
    await publisher.close();
  }
}

describe('startRedisOpsPublisher', () => {
  it('publishes to a standalone Redis (redis://)', async () => {
    const client = standalone.client();
    await publishesTo(standalone.url, (stream) => client.xrange(stream, '-', '+'));
  });

  it('publishes to a Redis Cluster (redis-cluster://), following the slot of its stream', async () => {
    expect(cluster.url).toMatch(/^redis-cluster:\/\//);
    const client = cluster.cluster();
    await publishesTo(cluster.url, (stream) => client.xrange(stream, '-', '+'));
  });

  it('refuses a URL that is not a Redis target with a RangeError, opening nothing', () => {
    expect(() =>
      startRedisOpsPublisher({
        redisUrl: 'http://127.0.0.1:1',
        connectionName: 'x',
        stream: 's',
        collect: snapshot,
        onWritten: () => undefined,
        onFailure: () => undefined,
        onRedisError: () => undefined,
      }),
    ).toThrow(RangeError);
  });
});
