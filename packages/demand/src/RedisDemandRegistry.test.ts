import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { INGEST_DEMAND_KEY } from './ingestDemandKey.js';
import { RedisDemandRegistry } from './RedisDemandRegistry.js';

let server: RedisServer;
let redis: Redis;
let registry: RedisDemandRegistry;

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  registry = new RedisDemandRegistry(redis);
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async () => {
  await redis.del(INGEST_DEMAND_KEY);
});

describe('RedisDemandRegistry: the demand key layout (real redis-server)', () => {
  it('scores each heartbeat stream with the Redis-clock moment its demand ends', async () => {
    const before = await redisNowMs();
    await registry.heartbeat(['chain:a', 'chain:b'], 15_000);
    const after = await redisNowMs();
    for (const stream of ['chain:a', 'chain:b']) {
      const score = Number(await redis.zscore(INGEST_DEMAND_KEY, stream));
      expect(score).toBeGreaterThanOrEqual(before + 15_000);
      expect(score).toBeLessThanOrEqual(after + 15_000);
    }
    expect(await redis.zcard(INGEST_DEMAND_KEY)).toBe(2);
  });

  it('writes nothing for an empty heartbeat', async () => {
    await registry.heartbeat([], 15_000);
    expect(await redis.exists(INGEST_DEMAND_KEY)).toBe(0);
  });

  it('reports only live demand, keeps recently expired members and drops those expired over an hour ago', async () => {
    const now = await redisNowMs();
    await redis.zadd(INGEST_DEMAND_KEY, now + 60_000, 'live', now - 60_000, 'lapsed', now - 2 * 3_600_000, 'ancient');
    expect(await registry.demanded()).toEqual(new Set(['live']));
    expect(await redis.zscore(INGEST_DEMAND_KEY, 'lapsed')).not.toBeNull();
    expect(await redis.zscore(INGEST_DEMAND_KEY, 'ancient')).toBeNull();
  });
});
