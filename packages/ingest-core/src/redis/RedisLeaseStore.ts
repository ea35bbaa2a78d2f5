import type { RedisClient } from '@streamgate/redis';
import { ingestKeys } from './ingestKeys.js';
import { scriptThenWait } from './scriptThenWait.js';
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

/**
 * Grant a lease only once `count` replicas of the node that granted it acknowledged the grant
 * (its fence INCR), waiting at most `timeoutMs` (Redis `WAIT`, pipelined behind the acquire
 * script). Fewer in time: the lease is released at once and acquire answers null, so a token a
 * promoted replica could hand out again is never used. Narrows the failover window, does not
 * close it (docs/protocol.md §11 "Streams ingest writes").
 */
export type LeaseReplicaWait = {
  count: number;
  timeoutMs: number;
  /** A grant taken back: how many replicas acknowledged, and why WAIT failed if it did. */
  onNotReplicated?: (key: string, replicas: number, waitError: string | undefined) => void;
};

export type RedisLeaseStoreOptions = { waitForReplicas?: LeaseReplicaWait };

/** Leases of one target (an instance or a Redis Cluster); with several, one store per target. */
export class RedisLeaseStore implements LeaseStore {
  private readonly scripts: Scripts;
  private readonly wait: LeaseReplicaWait | undefined;
  /** After a grant was taken back, acquires answer null until then (see acquire). */
  private holdOffUntil = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    options: RedisLeaseStoreOptions = {},
  ) {
    const wait = options.waitForReplicas;
    if (
      wait !== undefined &&
      !(Number.isInteger(wait.count) && wait.count >= 1 && Number.isInteger(wait.timeoutMs) && wait.timeoutMs >= 1)
    ) {
      // WAIT with timeout 0 blocks for ever; count 0 would wait for nothing.
      throw new RangeError(`waitForReplicas needs a positive integer count and timeoutMs, got ${wait.count} and ${wait.timeoutMs}`);
    }
    this.wait = wait;
    redis.defineCommand('sgLeaseAcquire', { numberOfKeys: 2, lua: ACQUIRE });
    redis.defineCommand('sgLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('sgLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
    this.scripts = redis as unknown as Scripts;
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const keys = ingestKeys(this.keyPrefix, key);
    if (this.wait === undefined) {
      const token = await this.scripts.sgLeaseAcquire(keys.lease, keys.fence, owner, ttlMs);
      return typeof token === 'number' ? { key, token } : null;
    }
    // While replicas are short every WAIT lasts its whole timeout and blocks this connection; the
    // worker takes keys one by one, so a pass over many free keys would delay its renewals past
    // the TTL. One attempt per third of a TTL (a tick is at most that) bounds what a pass waits.
    if (Date.now() < this.holdOffUntil) return null;
    const { reply, replicas, waitError } = await scriptThenWait(this.redis, ACQUIRE, [2, keys.lease, keys.fence, owner, ttlMs], this.wait);
    if (typeof reply !== 'number') return null;
    if (replicas >= this.wait.count) return { key, token: reply };
    this.holdOffUntil = Date.now() + ttlMs / 3;
    this.wait.onNotReplicated?.(key, replicas, waitError);
    // Not released (Redis failed): the lease expires unused after ttlMs, the worker logs the error.
    await this.scripts.sgLeaseRelease(keys.lease, `${owner}|${reply}`);
    return null;
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
