import type { RedisClient } from '@streamgate/redis';
import { ingestKeys } from './ingestKeys.js';
import type { Lease, LeaseStore } from '../LeaseStore.js';

// KEYS: lease, fence (ingestKeys: one slot, so this runs on Redis Cluster as well).
// The fence counter only grows and is bumped in the same step that grants the lease, so the
// newest holder always has the highest token and the writer can refuse everyone else.
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
return token
`;
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type Scripts = {
  sgLeaseAcquire(lease: string, fence: string, owner: string, ttl: number): Promise<number | null>;
  sgLeaseRenew(lease: string, value: string, ttl: number): Promise<number>;
  sgLeaseRelease(lease: string, value: string): Promise<number>;
};

/** Leases of one target (an instance or a Redis Cluster); with several, one store per target. */
export class RedisLeaseStore implements LeaseStore {
  private readonly scripts: Scripts;

  constructor(
    redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    redis.defineCommand('sgLeaseAcquire', { numberOfKeys: 2, lua: ACQUIRE });
    redis.defineCommand('sgLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('sgLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
    this.scripts = redis as unknown as Scripts;
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const keys = ingestKeys(this.keyPrefix, key);
    const token = await this.scripts.sgLeaseAcquire(keys.lease, keys.fence, owner, ttlMs);
    return typeof token === 'number' ? { key, token } : null;
  }

  async renew(lease: Lease, owner: string, ttlMs: number): Promise<boolean> {
    const keys = ingestKeys(this.keyPrefix, lease.key);
    return (await this.scripts.sgLeaseRenew(keys.lease, `${owner}|${lease.token}`, ttlMs)) === 1;
  }

  async release(lease: Lease, owner: string): Promise<void> {
    const keys = ingestKeys(this.keyPrefix, lease.key);
    await this.scripts.sgLeaseRelease(keys.lease, `${owner}|${lease.token}`);
  }
}
