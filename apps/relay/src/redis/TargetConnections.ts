import { Redis } from 'ioredis';
import type { Cluster, ClusterOptions } from 'ioredis';
import { parseRedisTarget } from '@streamgate/protocol';
import { isClusterClient, openRedis } from '@streamgate/redis';
import type { NodeOptions, RedisClient } from '@streamgate/redis';
import { nodeSubscriberOptions } from './nodeSubscriberOptions.js';
import type { RedisSourceOptions } from './RedisSourceOptions.js';

type ConnectionReporting = Pick<RedisSourceOptions, 'target' | 'username' | 'password' | 'connectionName' | 'onError' | 'onReconnect'>;

/**
 * Opens the Redis connections of one target, each named and observed the same way: its errors
 * and reconnects reported. The source opens its command connection here, and its live readers theirs.
 */
export class TargetConnections {
  /** A Redis Cluster target. */
  readonly cluster: boolean;

  constructor(private readonly options: ConnectionReporting) {
    this.cluster = parseRedisTarget(options.target)?.kind === 'cluster';
  }

  /**
   * A connection to the target: an ioredis Redis for an instance; for a Redis Cluster an ioredis
   * Cluster (one connection per node it sends to, following MOVED/ASK and failovers). Reconnects
   * back off with full jitter (openRedis), so a restarting Redis is not stampeded.
   */
  connect(role: string, node: NodeOptions, cluster: Omit<ClusterOptions, 'redisOptions'> = {}): RedisClient {
    const client = openRedis(this.options.target, {
      username: this.options.username,
      password: this.options.password,
      connectionName: `${this.options.connectionName}:${role}`,
      node: { protocol: 2, ...(this.cluster ? {} : { lazyConnect: false }), ...node },
      cluster,
    });
    this.observe(client, role);
    return client;
  }

  /** A single-instance connection; a Redis Cluster target has none. */
  instance(role: string, node: NodeOptions): Redis {
    const client = this.connect(role, node);
    if (isClusterClient(client)) throw new Error(`${this.options.target}: a Redis Cluster has no single-instance ${role} connection`);
    return client;
  }

  /** A plain pub/sub connection to one primary, with the cluster client's per-node options (nodeSubscriberOptions). */
  nodeSubscriber(reader: Cluster, node: string): Redis {
    const subscriber = new Redis(nodeSubscriberOptions(reader.options.redisOptions, node, `${this.options.connectionName}:notify`));
    this.observe(subscriber, 'notify');
    return subscriber;
  }

  private observe(client: RedisClient, role: string): void {
    client.on('error', (error: Error) => this.options.onError('connection', error));
    if (isClusterClient(client)) client.on('node error', (error: Error) => this.options.onError('connection', error));
    let wasReady = false;
    client.on('ready', () => {
      if (wasReady) this.options.onReconnect?.(role === 'cmd' ? 'command' : 'reader');
      wasReady = true;
    });
  }
}
