import type { Logger } from 'pino';
import { RedisDemandRegistry } from '@streamgate/demand';
import { RedisLeaseStore, RedisStreamWriter } from '@streamgate/ingest-core/redis';
import type { LeaseReplicaWait } from '@streamgate/ingest-core/redis';
import { openRedis } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import type { IngestConfig } from '../config.js';
import { IngestRedisTargets } from './IngestRedisTargets.js';
import type { TargetStores } from './IngestRedisTargets.js';

export interface IngestRedis {
  readonly targets: IngestRedisTargets;
  /** Targets whose connection is not ready now (for a cluster: its client has not discovered the slots). */
  unready(): string[];
  close(): void;
}

function leaseWait(config: IngestConfig, target: string, log: Logger): LeaseReplicaWait | undefined {
  const wait = config.redis.leaseWait;
  if (wait === undefined) return undefined;
  const onNotReplicated = (key: string, replicas: number, waitError: string | undefined): void =>
    log.warn(
      { key, target, replicas, wanted: wait.count, err: waitError },
      'lease grant not replicated in time; released, retried next round',
    );
  return { ...wait, onNotReplicated };
}

/** Opens every configured target (openRedis: an instance or a Redis Cluster) and the ingest stores on each. */
export function openIngestRedis(config: IngestConfig, log: Logger): IngestRedis {
  const clients = new Map<string, RedisClient>();
  const stores = new Map<string, TargetStores>();
  for (const target of config.redis.targets) {
    const redis = openRedis(target, {
      username: config.redis.username,
      password: config.redis.password,
      connectionName: `streamgate-ingest:${config.INGEST_WORKER_ID}`,
      node: { maxRetriesPerRequest: 2 },
    });
    redis.on('error', (error: Error) => log.warn({ err: error.message, target }, 'redis error'));
    clients.set(target, redis);
    stores.set(target, {
      writer: new RedisStreamWriter({
        redis,
        keyPrefix: config.INGEST_KEY_PREFIX,
        dedupeTtlMs: config.INGEST_DEDUPE_TTL_MS,
        maxLen: config.INGEST_STREAM_MAXLEN,
      }),
      leases: new RedisLeaseStore(redis, config.INGEST_KEY_PREFIX, { waitForReplicas: leaseWait(config, target, log) }),
      demand: new RedisDemandRegistry(redis),
    });
  }
  return {
    targets: new IngestRedisTargets(stores),
    unready: () => [...clients].filter(([, c]) => c.status !== 'ready').map(([t]) => t),
    close: () => {
      for (const c of clients.values()) c.disconnect();
    },
  };
}
