import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import { backoffDelay, parseRedisTarget } from '@streamgate/protocol';

/** A connection to a target: one instance, or a Redis Cluster (one connection per node it uses). */
export type RedisClient = Redis | Cluster;

/** Options ioredis takes per node; Cluster refuses the ones it sets itself. */
export type NodeOptions = Omit<
  RedisOptions,
  'port' | 'host' | 'path' | 'sentinels' | 'retryStrategy' | 'enableOfflineQueue' | 'readOnly' | 'db'
>;

export interface OpenRedisOptions {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** CLIENT SETNAME of every connection this opens. */
  readonly connectionName?: string | undefined;
  /** Per connection (for a cluster: per node connection). */
  readonly node?: NodeOptions;
  /** Only on a standalone target. */
  readonly enableOfflineQueue?: boolean;
  /** Only on a cluster target. */
  readonly cluster?: Omit<ClusterOptions, 'redisOptions'>;
}

/**
 * Opens a normalized target URL (normalizeRedisTarget): `redis://…` as an ioredis Redis,
 * `redis-cluster://seed:port` as an ioredis Cluster that discovers the other nodes from the seed
 * and follows MOVED/ASK and failovers itself. Reconnects back off with full jitter, so a restarted
 * Redis is not stampeded by every pod at once. Throws a RangeError for a URL that is not a target.
 */
export function openRedis(target: string, options: OpenRedisOptions = {}): RedisClient {
  const address = parseRedisTarget(target);
  if (address === null) throw new RangeError(`"${target}" is not a redis://, rediss://, redis-cluster:// or rediss-cluster:// target`);
  // The URL form brackets an IPv6 host (`[::1]`); a socket address must not have them.
  const host = address.host.replace(/^\[(.*)\]$/, '$1');
  const common: NodeOptions = {
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.connectionName === undefined ? {} : { connectionName: options.connectionName }),
    ...(address.tls ? { tls: { servername: host } } : {}),
    ...options.node,
  };
  if (address.kind === 'standalone') {
    return new Redis({
      host,
      port: address.port,
      db: address.db,
      retryStrategy: (times) => backoffDelay(times, 50, 5_000),
      ...(options.enableOfflineQueue === undefined ? {} : { enableOfflineQueue: options.enableOfflineQueue }),
      ...common,
    });
  }
  return new Cluster([{ host, port: address.port }], {
    clusterRetryStrategy: (times) => backoffDelay(times, 50, 5_000),
    ...options.cluster,
    redisOptions: common,
  });
}

/** Whether a client is a Redis Cluster client (its multi-key commands must stay within one slot). */
export function isClusterClient(client: RedisClient): client is Cluster {
  return client.isCluster;
}
