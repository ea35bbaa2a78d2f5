import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@streamgate/redis';
import { startRedis, startRedisCluster, waitFor } from '@streamgate/testkit';
import { RedisDemandRegistry } from '@streamgate/demand';
import { ingestKeys } from './ingestKeys.js';
import { RedisLeaseStore } from './RedisLeaseStore.js';
import { RedisStreamWriter } from './RedisStreamWriter.js';

const keys = (stream: string) => ingestKeys('t:', stream);

async function openOne(): Promise<{ redis: RedisClient; stop: () => Promise<void> }> {
  const server = await startRedis();
  return { redis: server.client(), stop: () => server.stop() };
}

async function openCluster(): Promise<{ redis: RedisClient; stop: () => Promise<void> }> {
  const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
  return { redis: cluster.cluster(), stop: () => cluster.stop() };
}

describe.each([
  { kind: 'one redis-server', open: openOne, name: (s: string) => s },
  // On the cluster every stream name carries a hash tag: the keys must follow it into its slot.
  { kind: 'a Redis Cluster of 3 primaries', open: openCluster, name: (s: string) => `{${s}-tag}:${s}` },
])('the Redis write step, leases and demand ($kind)', ({ open, name: n }) => {
  let redis: RedisClient;
  let writer: RedisStreamWriter;
  let leases: RedisLeaseStore;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ redis, stop } = await open());
    writer = new RedisStreamWriter({ redis, keyPrefix: 't:', dedupeTtlMs: 60_000, maxLen: 0 });
    leases = new RedisLeaseStore(redis, 't:');
  });
  afterAll(async () => {
    await stop?.();
  });

  it('refuses a stale fencing token and accepts the current one', async () => {
    const first = await leases.acquire(n('s1'), 'a', 100);
    expect(first?.token).toBe(1);
    expect(await leases.acquire(n('s1'), 'b', 100)).toBeNull();
    await waitFor(async () => (await redis.exists(keys(n('s1')).lease)) === 0, { timeoutMs: 2_000, message: 'lease expires' });
    const second = await leases.acquire(n('s1'), 'b', 10_000);
    expect(second?.token).toBe(2);
    if (first === null || second === null) return;
    expect(await leases.renew(first, 'a', 10_000)).toBe(false);
    const stale = await writer.write(
      { key: n('s1'), token: first.token },
      { entries: [{ dedupeId: 'x', data: '{"n":1}' }], stateSet: { cp: 'stale' } },
    );
    expect(stale).toMatchObject({ ok: false, error: { code: 'fenced', retryable: false } });
    expect(await redis.xlen(n('s1'))).toBe(0);
    expect(await redis.hget(keys(n('s1')).state, 'cp')).toBeNull();
    const fresh = await writer.write(
      { key: n('s1'), token: second.token },
      { entries: [{ dedupeId: 'x', data: '{"n":1}' }], stateSet: { cp: 'one' } },
    );
    expect(fresh).toMatchObject({ ok: true, written: 1, duplicates: 0 });
    expect(await leases.renew(second, 'b', 10_000)).toBe(true);
  });

  it('writes a duplicate once but still records the state change, atomically with the entries', async () => {
    const lease = await leases.acquire(n('s2'), 'a', 10_000);
    if (lease === null) throw new Error('no lease');
    const fence = { key: n('s2'), token: lease.token };
    await writer.write(fence, { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '1', 'b:1': 'x' } });
    const again = await writer.write(fence, {
      entries: [
        { dedupeId: 'a', data: '1' },
        { dedupeId: 'b', data: '2' },
      ],
      stateSet: { cp: '2' },
      stateDel: ['b:1'],
    });
    expect(again).toMatchObject({ ok: true, written: 1, duplicates: 1 });
    if (!again.ok) return;
    expect(again.ids[0]).toBeNull();
    expect(typeof again.ids[1]).toBe('string');
    expect((await redis.xrange(n('s2'), '-', '+')).map(([, f]) => f[1])).toEqual(['1', '2']);
    expect(await writer.loadState({ key: n('s2'), token: lease.token })).toEqual(new Map([['cp', '2']]));
  });

  it('refuses a key that is not a stream without writing anything', async () => {
    await redis.set(n('s3'), 'a string');
    const lease = await leases.acquire(n('s3'), 'a', 10_000);
    if (lease === null) throw new Error('no lease');
    const outcome = await writer.write(
      { key: n('s3'), token: lease.token },
      { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '1' } },
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: 'wrong_type' } });
    expect(await redis.exists(keys(n('s3')).dedupe('a'))).toBe(0);
    expect(await redis.hget(keys(n('s3')).state, 'cp')).toBeNull();
  });

  it('refuses a stream whose companion keys cannot share its slot, writing nothing', async () => {
    const outcome = await writer.write({ key: 'a}b', token: 1 }, { entries: [{ dedupeId: 'a', data: '1' }] });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'stream_untaggable', retryable: false, stream: 'a}b' } });
    expect(await redis.exists('a}b')).toBe(0);
    await expect(leases.acquire('a}b', 'a', 10_000)).rejects.toMatchObject({ error: { code: 'stream_untaggable' } });
  });

  it('carries a checkpoint over from the layout before slot tags, once', async () => {
    await redis.hset(`t:{${n('s4')}}:state`, { cp: 'old', 'b:9': 'h' });
    expect(await writer.loadState({ key: n('s4'), token: 0 })).toEqual(
      new Map([
        ['cp', 'old'],
        ['b:9', 'h'],
      ]),
    );
    expect(await redis.hgetall(keys(n('s4')).state)).toEqual({ cp: 'old', 'b:9': 'h' });
    await redis.hset(keys(n('s4')).state, 'cp', 'new');
    expect((await writer.loadState({ key: n('s4'), token: 0 })).get('cp')).toBe('new');
  });

  it('reports demand until its heartbeat TTL passes', async () => {
    const demand = new RedisDemandRegistry(redis);
    await demand.heartbeat(['d1', 'd2'], 150);
    await demand.heartbeat(['d2'], 10_000);
    // A shorter heartbeat never shortens what another reporter asked for.
    await demand.heartbeat(['d2'], 1);
    expect(await demand.demanded()).toEqual(new Set(['d1', 'd2']));
    await waitFor(async () => !(await demand.demanded()).has('d1'), { timeoutMs: 2_000, message: 'd1 expires' });
    expect(await demand.demanded()).toEqual(new Set(['d2']));
  });
});
