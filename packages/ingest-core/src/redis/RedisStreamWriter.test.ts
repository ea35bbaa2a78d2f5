import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { RedisDemandRegistry } from '@streamgate/demand';
import { ingestKeys } from './ingestKeys.js';
import { RedisLeaseStore } from './RedisLeaseStore.js';
import { RedisStreamWriter } from './RedisStreamWriter.js';

let server: RedisServer;
let redis: Redis;
let writer: RedisStreamWriter;
let leases: RedisLeaseStore;
const keys = (stream: string) => ingestKeys('t:', stream);

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  writer = new RedisStreamWriter({ redis, keyPrefix: 't:', dedupeTtlMs: 60_000, maxLen: 0 });
  leases = new RedisLeaseStore(redis, 't:');
});
afterAll(async () => {
  await server?.stop();
});

describe('the Redis write step, leases and demand (real redis-server)', () => {
  it('refuses a stale fencing token and accepts the current one', async () => {
    const first = await leases.acquire('s1', 'a', 100);
    expect(first?.token).toBe(1);
    expect(await leases.acquire('s1', 'b', 100)).toBeNull();
    await waitFor(async () => (await redis.exists(keys('s1').lease)) === 0, { timeoutMs: 2_000, message: 'lease expires' });
    const second = await leases.acquire('s1', 'b', 10_000);
    expect(second?.token).toBe(2);
    if (first === null || second === null) return;
    expect(await leases.renew(first, 'a', 10_000)).toBe(false);
    const stale = await writer.write(
      { key: 's1', token: first.token },
      { entries: [{ dedupeId: 'x', data: '{"n":1}' }], stateSet: { cp: 'stale' } },
    );
    expect(stale).toMatchObject({ ok: false, error: { code: 'fenced', retryable: false } });
    expect(await redis.xlen('s1')).toBe(0);
    expect(await redis.hget(keys('s1').state, 'cp')).toBeNull();
    const fresh = await writer.write(
      { key: 's1', token: second.token },
      { entries: [{ dedupeId: 'x', data: '{"n":1}' }], stateSet: { cp: 'one' } },
    );
    expect(fresh).toMatchObject({ ok: true, written: 1, duplicates: 0 });
    expect(await leases.renew(second, 'b', 10_000)).toBe(true);
  });

  it('writes a duplicate once but still records the state change, atomically with the entries', async () => {
    const lease = await leases.acquire('s2', 'a', 10_000);
    if (lease === null) throw new Error('no lease');
    const fence = { key: 's2', token: lease.token };
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
    expect((await redis.xrange('s2', '-', '+')).map(([, f]) => f[1])).toEqual(['1', '2']);
    expect(await writer.loadState('s2')).toEqual(new Map([['cp', '2']]));
  });

  it('refuses a key that is not a stream without writing anything', async () => {
    await redis.set('s3', 'a string');
    const lease = await leases.acquire('s3', 'a', 10_000);
    if (lease === null) throw new Error('no lease');
    const outcome = await writer.write(
      { key: 's3', token: lease.token },
      { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '1' } },
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: 'wrong_type' } });
    expect(await redis.exists(keys('s3').dedupe('a'))).toBe(0);
    expect(await redis.hget(keys('s3').state, 'cp')).toBeNull();
  });

  it('refuses a stream whose companion keys cannot share its slot, writing nothing', async () => {
    const outcome = await writer.write({ key: 'a}b', token: 1 }, { entries: [{ dedupeId: 'a', data: '1' }] });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'stream_untaggable', retryable: false, stream: 'a}b' } });
    expect(await redis.exists('a}b')).toBe(0);
    await expect(leases.acquire('a}b', 'a', 10_000)).rejects.toMatchObject({ error: { code: 'stream_untaggable' } });
  });

  it('carries a checkpoint over from the layout before slot tags, once', async () => {
    await redis.hset('t:{s4}:state', { cp: 'old', 'b:9': 'h' });
    expect(await writer.loadState('s4')).toEqual(
      new Map([
        ['cp', 'old'],
        ['b:9', 'h'],
      ]),
    );
    expect(await redis.hgetall(keys('s4').state)).toEqual({ cp: 'old', 'b:9': 'h' });
    await redis.hset(keys('s4').state, 'cp', 'new');
    expect((await writer.loadState('s4')).get('cp')).toBe('new');
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
