import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineStream } from '@streamgate/protocol';
import { startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisCluster, RedisClusterNode } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';
import { PublisherConnection } from './PublisherConnection.js';

const notes = defineStream<{ n: number }>('notes');

/** The node replicating `primary`, found by port in CLUSTER REPLICAS. */
async function replicaOf(cluster: RedisCluster, primary: RedisClusterNode): Promise<RedisClusterNode> {
  const lines = (await primary.client().call('CLUSTER', 'REPLICAS', primary.id)) as string[];
  const port = Number(/:(\d+)@/.exec(lines[0] ?? '')?.[1]);
  const replica = cluster.nodes.find((node) => node.port === port);
  if (replica === undefined) throw new Error(`no replica of ${primary.port} in ${JSON.stringify(lines)}`);
  return replica;
}

describe('createPublisher on a Redis Cluster (3 primaries, 1 replica each)', () => {
  let cluster: RedisCluster;
  let keys: string[];

  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
    // Stream names `notes:<key>` on every primary: the names hash whole, so pick them whole.
    keys = await cluster.keysOnEveryPrimary('notes:c', 6);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('writes plain and idempotent entries to the node serving each stream’s slot', async () => {
    const publisher = createPublisher({ targets: cluster.url });
    try {
      for (const [i, name] of keys.entries()) {
        const stream = notes.for(name.slice('notes:'.length));
        const plain = await publisher.publish(stream, { n: i });
        const keyed = await publisher.publish(stream, { n: i }, { idempotencyKey: `k${i}` });
        const again = await publisher.publish(stream, { n: i }, { idempotencyKey: `k${i}` });
        if (!plain.ok || !keyed.ok || !again.ok) throw new Error(JSON.stringify([plain, keyed, again]));
        expect(again).toEqual({ ok: true, id: keyed.id, duplicate: true });
        const owner = (await cluster.primaryOf(name)).client();
        expect((await owner.xrange(name, '-', '+')).map(([id]) => id)).toEqual([plain.id, keyed.id]);
      }
      const owners = new Set(await Promise.all(keys.map(async (k) => (await cluster.primaryOf(k)).port)));
      expect(owners.size).toBe(3);
    } finally {
      await publisher.close();
    }
  });

  it('takes every first write of a fresh publisher, sent to all primaries at once', async () => {
    // Before the primaries had connected, ioredis refused writes for them unsent ("Connection is closed.").
    for (const publisher of [createPublisher({ targets: cluster.url }), createPublisher({ redis: cluster.cluster() })]) {
      try {
        const results = await Promise.all(Array.from({ length: 600 }, (_, i) => publisher.publish(notes.for(`fresh:{${i}}`), { n: i })));
        const failures = results.flatMap((r) => (r.ok ? [] : [r.error.message]));
        expect(failures).toEqual([]);
      } finally {
        await publisher.close();
      }
    }
  });

  it('also publishes through a caller’s Cluster client, on its own connections', async () => {
    const client = cluster.cluster();
    const publisher = createPublisher({ redis: client });
    const name = keys[0] ?? '';
    const result = await publisher.publish(notes.for(name.slice('notes:'.length)), { n: 99 });
    expect(result.ok).toBe(true);
    await publisher.close();
    // The publisher's close leaves the caller's client alone.
    expect(['end', 'close', 'disconnecting']).not.toContain(client.status);
  });

  it('does not auto-pipeline on a Cluster either, though the caller’s client does', async () => {
    const client = cluster.cluster({ enableAutoPipelining: true, lazyConnect: true });
    const connection = PublisherConnection.acquire(client);
    try {
      const wait = await connection.ready(10_000);
      if (!wait.ok) throw new Error(wait.reason);
      expect(wait.redis.options.enableAutoPipelining).toBe(false);
      expect(client.options.enableAutoPipelining).toBe(true);
    } finally {
      await connection.release();
      client.disconnect();
    }
  });

  it('waits for the replicas of the stream’s own node: not_replicated only where that replica is down', async () => {
    const onA = keys[0] ?? '';
    const primaryA = await cluster.primaryOf(onA);
    const owners = await Promise.all(keys.map(async (k) => ({ k, port: (await cluster.primaryOf(k)).port })));
    const elsewhere = owners.find((o) => o.port !== primaryA.port)?.k ?? '';
    const publisher = createPublisher({ targets: cluster.url, timeoutMs: 3_000, waitForReplicas: { count: 1, timeoutMs: 1_000 } });
    try {
      const healthy = await publisher.publish(notes.for(onA.slice(6)), { n: 1 });
      expect(healthy.ok).toBe(true);
      const tooMany = await publisher.publish(notes.for(onA.slice(6)), { n: 2 }, { waitForReplicas: { count: 2, timeoutMs: 200 } });
      expect(tooMany).toMatchObject({ ok: false, error: { code: 'not_replicated', retryable: true, replicas: 1, wanted: 2 } });

      const replicaA = await replicaOf(cluster, primaryA);
      await replicaA.kill();
      const unreplicated = await publisher.publish(notes.for(onA.slice(6)), { n: 3 }, { idempotencyKey: 'u1' });
      if (unreplicated.ok || unreplicated.error.code !== 'not_replicated') throw new Error(JSON.stringify(unreplicated));
      expect(unreplicated.error).toMatchObject({ replicas: 0, wanted: 1, duplicate: false });
      // Written on the primary, under the id the error carries; the retry with the key finds it.
      expect((await primaryA.client().xrange(onA, unreplicated.error.id, unreplicated.error.id)).length).toBe(1);
      const retry = await publisher.publish(notes.for(onA.slice(6)), { n: 3 }, { idempotencyKey: 'u1' });
      expect(retry).toMatchObject({ ok: false, error: { code: 'not_replicated', id: unreplicated.error.id, duplicate: true } });
      // A stream on another primary (whose replica is up) is unaffected: WAIT went to each stream's node.
      const other = await publisher.publish(notes.for(elsewhere.slice(6)), { n: 4 });
      expect(other.ok).toBe(true);
      const skipped = await publisher.publish(notes.for(onA.slice(6)), { n: 5 }, { waitForReplicas: false });
      expect(skipped.ok).toBe(true);
      await replicaA.restart();
      await cluster.waitHealthy();
    } finally {
      await publisher.close();
    }
  }, 60_000);

  it('never resends a write whose node connection dropped under it (the caller hears redis_unavailable, maybe written)', async () => {
    const name = keys[1] ?? '';
    const stream = notes.for(name.slice('notes:'.length));
    const publisher = createPublisher({ targets: cluster.url, timeoutMs: 5_000, connectionName: 'pub-noresend' });
    const admin = (await cluster.primaryOf(name)).client();
    try {
      const warm = await publisher.publish(stream, { n: 0 });
      if (!warm.ok) throw new Error(warm.error.message);
      const before = await admin.xlen(name);
      await admin.call('CLIENT', 'PAUSE', '10000', 'WRITE');
      const pending = publisher.publish(stream, { n: 1 });
      // The write (the live XADD script) reached the node and is held there, unapplied, by the pause.
      const blocked = await waitFor(
        async () => {
          const list = (await admin.call('CLIENT', 'LIST')) as string;
          return list
            .split('\n')
            .find((line) => line.includes('name=pub-noresend') && / cmd=evalsha /.test(line) && / flags=\S*b/.test(line));
        },
        { timeoutMs: 5_000, message: 'the publisher’s XADD never blocked on the paused node' },
      );
      const id = / id=(\d+)/.exec(` ${blocked}`)?.[1] ?? '';
      await admin.call('CLIENT', 'KILL', 'ID', id);
      // ioredis Cluster's default would resend it 100 ms later on a new connection (held by the
      // pause, then applied): the caller would see a timeout or a success, and maybe a second entry.
      expect(await pending).toMatchObject({ ok: false, error: { code: 'redis_unavailable', retryable: true, written: 'unknown' } });
      await admin.call('CLIENT', 'UNPAUSE');
      const after = await publisher.publish(stream, { n: 2 });
      expect(after.ok).toBe(true);
      expect(await admin.xlen(name)).toBe(before + 1);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
      await publisher.close();
    }
  });

  it('refuses a wait that cannot finish before the publish deadline', async () => {
    expect(() => createPublisher({ targets: cluster.url, timeoutMs: 500, waitForReplicas: { count: 1, timeoutMs: 500 } })).toThrow(
      /below the publisher's timeoutMs/,
    );
    const publisher = createPublisher({ targets: cluster.url, timeoutMs: 500 });
    const result = await publisher.publish(notes, { n: 0 }, { waitForReplicas: { count: 0, timeoutMs: 10 } });
    expect(result).toMatchObject({ ok: false, error: { code: 'options_invalid', field: 'waitForReplicas', retryable: false } });
    await publisher.close();
  });
});
