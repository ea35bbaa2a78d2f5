import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { startRedis, startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisCluster, RedisServer } from '@streamgate/testkit';
import { ingestKeys } from './ingestKeys.js';
import { RedisLeaseStore } from './RedisLeaseStore.js';

const keys = (stream: string) => ingestKeys('t:', stream);
const wait = { count: 1, timeoutMs: 100 };

describe('RedisLeaseStore with waitForReplicas, on a primary without a replica', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedis();
    redis = server.client();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('takes the grant back when no replica acknowledged it: not acquired, lease key gone', async () => {
    const shorts: [string, number, string | undefined][] = [];
    const leases = new RedisLeaseStore(redis, 't:', { waitForReplicas: { ...wait, onNotReplicated: (...a) => shorts.push(a) } });
    expect(await leases.acquire('a', 'w1', 10_000)).toBeNull();
    expect(shorts).toEqual([['a', 0, undefined]]);
    expect(await redis.exists(keys('a').lease)).toBe(0);
    // The token was spent (the fence only grows), never handed to anyone.
    expect(await redis.get(keys('a').fence)).toBe('1');
    // Within a third of the TTL the store does not try again (nor block the connection on WAIT).
    expect(await leases.acquire('b', 'w1', 10_000)).toBeNull();
    expect(await redis.exists(keys('b').fence)).toBe(0);
    expect(shorts).toHaveLength(1);
  });

  it('waits once, not twice, on a node that does not know the script (a fresh or failed-over primary)', async () => {
    await redis.script('FLUSH');
    await redis.config('RESETSTAT');
    const leases = new RedisLeaseStore(redis, 't:', { waitForReplicas: wait });
    expect(await leases.acquire('noscript', 'w1', 10_000)).toBeNull();
    expect(/cmdstat_wait:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1]).toBe('1');
  });

  it('leaves a lease someone else holds alone', async () => {
    await new RedisLeaseStore(redis, 't:').acquire('c', 'holder', 10_000);
    const shorts: string[] = [];
    const leases = new RedisLeaseStore(redis, 't:', { waitForReplicas: { ...wait, onNotReplicated: (key) => shorts.push(key) } });
    expect(await leases.acquire('c', 'w1', 10_000)).toBeNull();
    expect(await redis.get(keys('c').lease)).toBe('holder|1');
    expect(shorts).toEqual([]);
  });

  it('refuses a count or timeout WAIT cannot take', () => {
    expect(() => new RedisLeaseStore(redis, 't:', { waitForReplicas: { count: 0, timeoutMs: 10 } })).toThrow(RangeError);
    expect(() => new RedisLeaseStore(redis, 't:', { waitForReplicas: { count: 1, timeoutMs: 0 } })).toThrow(RangeError);
  });
});

describe('RedisLeaseStore with waitForReplicas, on a primary with one replica', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  beforeAll(async () => {
    primary = await startRedis();
    replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    const info = replica.client();
    await waitFor(async () => /master_link_status:up/.test(await info.info('replication')), {
      timeoutMs: 10_000,
      message: 'replica linked to its primary',
    });
  });
  afterAll(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  it('grants the lease once the replica acknowledged it, and the replica has the fence', async () => {
    const redis = primary.client();
    const shorts: string[] = [];
    const leases = new RedisLeaseStore(redis, 't:', {
      waitForReplicas: { count: 1, timeoutMs: 2_000, onNotReplicated: (k) => shorts.push(k) },
    });
    const lease = await leases.acquire('a', 'w1', 10_000);
    expect(lease).toEqual({ key: 'a', token: 1 });
    expect(shorts).toEqual([]);
    expect(await redis.get(keys('a').lease)).toBe('w1|1');
    expect(await replica.client().get(keys('a').fence)).toBe('1');
    // Asking for more replicas than there are takes the grant back.
    const greedy = new RedisLeaseStore(redis, 't:', {
      waitForReplicas: { count: 2, timeoutMs: 100, onNotReplicated: (k) => shorts.push(k) },
    });
    expect(await greedy.acquire('b', 'w1', 10_000)).toBeNull();
    expect(shorts).toEqual(['b']);
    expect(await redis.exists(keys('b').lease)).toBe(0);
  });
});

describe('RedisLeaseStore with waitForReplicas, on a Redis Cluster of 3 primaries with a replica each', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('WAIT rides with the acquire script to the node of the stream slot, on every primary', async () => {
    const redis = cluster.cluster();
    const streams = await cluster.keysOnEveryPrimary('lease-wait-', 3);
    const shorts: number[] = [];
    const leases = new RedisLeaseStore(redis, 't:', {
      waitForReplicas: { count: 1, timeoutMs: 2_000, onNotReplicated: (_, n) => shorts.push(n) },
    });
    for (const stream of streams) expect(await leases.acquire(stream, 'w1', 10_000)).toEqual({ key: stream, token: 1 });
    expect(shorts).toEqual([]);
    // Each primary has one replica: asking for two takes the grant back, on whichever node it ran.
    const greedy = new RedisLeaseStore(redis, 'u:', {
      waitForReplicas: { count: 2, timeoutMs: 100, onNotReplicated: (_, n) => shorts.push(n) },
    });
    expect(await greedy.acquire(streams[0] ?? '', 'w1', 10_000)).toBeNull();
    expect(shorts).toEqual([1]);
    expect(await redis.exists(ingestKeys('u:', streams[0] ?? '').lease)).toBe(0);
  });
});
