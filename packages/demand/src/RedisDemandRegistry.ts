import type { RedisClient } from '@streamgate/redis';
import type { DemandSink } from './DemandSink.js';
import type { DemandSource } from './DemandSource.js';
import { INGEST_DEMAND_KEY } from './ingestDemandKey.js';

// Scores are Redis's own clock, so relays, auth and workers on skewed hosts agree on expiry.
// GT keeps the latest expiry any reporter asked for.
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'GT', expires, ARGV[i]) end
return #ARGV - 1
`;
const READ = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
`;

type Scripts = {
  sgDemandHeartbeat(key: string, ttl: number, ...streams: string[]): Promise<number>;
  sgDemandRead(key: string, keepMs: number): Promise<string[]>;
};

/**
 * Demand kept in one sorted set per target (see INGEST_DEMAND_KEY): one key, so one slot on a
 * Redis Cluster, and the scripts run there unchanged. Relays heartbeat the streams
 * they have subscribers for; the auth backend may register a stream when it mints a token, so
 * ingest starts before the first subscriber arrives.
 */
export class RedisDemandRegistry implements DemandSource, DemandSink {
  private readonly scripts: Scripts;

  constructor(redis: RedisClient) {
    redis.defineCommand('sgDemandHeartbeat', { numberOfKeys: 1, lua: HEARTBEAT });
    redis.defineCommand('sgDemandRead', { numberOfKeys: 1, lua: READ });
    this.scripts = redis as unknown as Scripts;
  }

  /** Marks `streams` as wanted for `ttlMs` from now (Redis time). */
  async heartbeat(streams: readonly string[], ttlMs: number): Promise<void> {
    if (streams.length === 0) return;
    await this.scripts.sgDemandHeartbeat(INGEST_DEMAND_KEY, ttlMs, ...streams);
  }

  async demanded(): Promise<ReadonlySet<string>> {
    // Entries that expired an hour ago are dropped so the set does not grow with dead streams.
    return new Set(await this.scripts.sgDemandRead(INGEST_DEMAND_KEY, 3_600_000));
  }
}
