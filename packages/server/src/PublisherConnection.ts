import type { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import { isClusterClient, openRedis } from '@streamgate/redis';
import type { OpenRedisOptions, RedisClient } from '@streamgate/redis';
import { errorText } from './PublishError.js';
import { timeoutAfter } from './timeoutAfter.js';

/*
 * Settings under which ioredis never sends a publish on its own. By default it resends commands
 * that were in flight when a connection dropped (they may already have been applied: a second
 * entry), keeps them for up to 20 reconnects, and queues commands issued while disconnected to
 * send whenever the connection returns (after the caller may have given up and retried). Here a
 * command is written once, to a ready connection, or not at all; whatever happens to it after
 * that is reported to the caller, who decides whether to retry.
 *
 * Never auto-pipelined either, whatever the caller's client does: LiveXaddBatcher already sends
 * one script per tick, and ioredis's auto-pipelining keeps one pipeline in flight per node,
 * holding each tick's script until the previous one's reply is back. A publisher at 1,000
 * entries a second, on a core shared with its Redis, had a write p99 of 7.5 ms with it and
 * 2.5 ms without, and used a quarter less CPU.
 */
const NEVER_RESEND: RedisOptions = {
  enableAutoPipelining: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  reconnectOnError: null,
  lazyConnect: true,
};

/*
 * The same on a Cluster, whose own retry paths sit above the node connections: a command lost
 * with its node's connection ("Connection is closed.") is resent after `retryDelayOnFailover`,
 * and one refused with CLUSTERDOWN after `retryDelayOnClusterDown`, both possibly after the
 * caller's timeout. Zero turns both off (the caller hears the failure). MOVED and ASK
 * redirections stay on: Redis applied nothing, and they are followed at once. TRYAGAIN (a
 * multi-key command during a slot migration, also not applied) is retried by ioredis at most
 * `maxRedirections` times, 100 ms apart, well inside a publish's timeout.
 */
const CLUSTER_NEVER_RESEND: ClusterOptions = {
  enableAutoPipelining: false,
  retryDelayOnFailover: 0,
  retryDelayOnClusterDown: 0,
  enableOfflineQueue: false,
  lazyConnect: true,
};
const NODE_NEVER_RESEND: RedisOptions = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0, reconnectOnError: null };

const DEFAULT_CONNECTION_NAME = 'streamgate-publisher';

export type ConnectionWait = { ok: true; redis: RedisClient } | { ok: false; ended: boolean; reason: string };

/** The key prefix a client would put in front of every key, if any (a publisher refuses one). */
export function clientKeyPrefix(client: RedisClient): string | undefined {
  if (!isClusterClient(client)) return client.options.keyPrefix || undefined;
  return client.options.keyPrefix || client.options.redisOptions?.keyPrefix || undefined;
}

function duplicateNeverResend(template: RedisClient): RedisClient {
  if (!isClusterClient(template)) {
    return template.duplicate({ ...NEVER_RESEND, connectionName: template.options.connectionName ?? DEFAULT_CONNECTION_NAME });
  }
  const nodeOptions = template.options.redisOptions ?? {};
  return template.duplicate([], {
    ...CLUSTER_NEVER_RESEND,
    redisOptions: { ...nodeOptions, ...NODE_NEVER_RESEND, connectionName: nodeOptions.connectionName ?? DEFAULT_CONNECTION_NAME },
  });
}

/** How a publisher reaches a target URL it was given (credentials stay out of the URL). */
export type TargetConnectionOptions = Pick<OpenRedisOptions, 'username' | 'password' | 'connectionName'>;

function openNeverResend(target: string, options: TargetConnectionOptions): RedisClient {
  return openRedis(target, {
    ...options,
    connectionName: options.connectionName ?? DEFAULT_CONNECTION_NAME,
    enableOfflineQueue: false,
    node: { ...NODE_NEVER_RESEND, lazyConnect: true },
    cluster: CLUSTER_NEVER_RESEND,
  });
}

// One connection per template client, shared by every publisher made from it: code that creates
// a publisher per call (`createPublisher({ redis }).publish(…)`) opens one connection, not one a call.
const byTemplate = new WeakMap<RedisClient, PublisherConnection>();

/**
 * Connects the Cluster's primaries and resolves once each is ready or its attempt failed. A
 * Cluster is ready as soon as it has the slot map; it connects a primary only when the first
 * command for it comes. With the offline queue off (CLUSTER_NEVER_RESEND), ioredis refuses every
 * command for a primary that is still connecting at once, as "Connection is closed.", without
 * sending it: a fresh cluster publisher lost 1–8% of its first writes that way. Only the start is
 * waited for; a primary reconnecting later still fails its writes fast, as meant.
 */
function primariesSettled(cluster: Cluster, onError: (error: unknown) => void): Promise<void> {
  const pending = cluster.nodes('master').filter((node) => node.status !== 'ready');
  return Promise.all(
    pending.map(
      (node) =>
        new Promise<void>((resolve) => {
          const done = (): void => {
            node.off('ready', done);
            node.off('close', done);
            node.off('end', done);
            resolve();
          };
          node.once('ready', done);
          node.once('close', done);
          node.once('end', done);
          if (node.status === 'wait') node.connect().catch(onError);
        }),
    ),
  ).then(() => undefined);
}

/**
 * The publishers' own connection to one target, with the resend paths turned off: either
 * duplicated from a caller's client (its address, auth, TLS, db, retry strategy; a Cluster's seed
 * nodes and options), which then sends nothing for a publisher, or opened from a target URL.
 * A duplicated one is shared by every publisher made from that client and closes when its last
 * publisher closes or when the client ends; one opened from a URL belongs to one publisher.
 */
export class PublisherConnection {
  private readonly redis: RedisClient;
  private lastError: string | undefined;
  private closed = false;
  private users = 0;
  private readiness: Promise<ConnectionWait> | undefined;
  /** A Cluster's primaries have had their chance to connect since it last became ready (primariesSettled). */
  private primariesWarm = false;

  /** The open connection for `template`, made on first use; call release() once done with it. */
  static acquire(template: RedisClient): PublisherConnection {
    const existing = byTemplate.get(template);
    if (existing !== undefined && !existing.closed) {
      existing.users += 1;
      return existing;
    }
    const connection = new PublisherConnection(duplicateNeverResend(template));
    if (template.status === 'end') connection.abandon();
    else template.once('end', () => connection.abandon());
    byTemplate.set(template, connection);
    connection.users = 1;
    return connection;
  }

  /** A connection of its own to a target URL (normalizeRedisTarget form); call release() once done. */
  static open(target: string, options: TargetConnectionOptions): PublisherConnection {
    const connection = new PublisherConnection(openNeverResend(target, options));
    connection.users = 1;
    return connection;
  }

  private constructor(redis: RedisClient) {
    this.redis = redis;
    // Between publishes ioredis reports reconnect failures only as events; the last one explains
    // the next publish that finds no connection.
    this.redis.on('error', (error: Error) => this.noteError(error));
    this.redis.on('close', () => (this.primariesWarm = false));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves with the connection once it is ready, or says why not within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<ConnectionWait> {
    if (this.closed) return { ok: false, ended: true, reason: 'the publisher is closed' };
    if (this.redis.status === 'ready' && (this.primariesWarm || !isClusterClient(this.redis))) return { ok: true, redis: this.redis };
    // Publishes that find no connection share one wait: a burst of them adds two listeners, not thousands.
    this.readiness ??= this.readyOrEnded();
    const timer = timeoutAfter(timeoutMs);
    try {
      const wait = await Promise.race([this.readiness, timer.promise]);
      if (wait !== 'timeout') return wait;
      return { ok: false, ended: false, reason: this.withLastError(`not connected to redis within ${timeoutMs} ms`) };
    } finally {
      timer.clear();
    }
  }

  private readyOrEnded(): Promise<ConnectionWait> {
    const redis = this.redis;
    return new Promise((resolve) => {
      const finish = (wait: ConnectionWait): void => {
        redis.off('ready', onReady);
        redis.off('end', onEnd);
        this.readiness = undefined;
        resolve(wait);
      };
      const onReady = (): void => {
        if (!isClusterClient(redis)) return finish({ ok: true, redis });
        void primariesSettled(redis, (error) => this.noteError(error)).then(() => {
          this.primariesWarm = true;
          finish({ ok: true, redis });
        });
      };
      const onEnd = (): void => finish({ ok: false, ended: this.closed, reason: this.withLastError('the connection to redis ended') });
      redis.once('end', onEnd);
      if (redis.status === 'ready') return onReady();
      redis.once('ready', onReady);
      // A connection that ended (a retry strategy that gave up) starts over on the next publish.
      if (redis.status === 'wait' || redis.status === 'end') {
        redis.connect().catch((error: unknown) => this.noteError(error));
      }
    });
  }

  /** Kept to explain the next publish that finds no connection. */
  private noteError(error: unknown): void {
    this.lastError = errorText(error);
  }

  private withLastError(what: string): string {
    return this.lastError === undefined ? what : `${what} (last error: ${this.lastError})`;
  }

  /** One publisher is done; the last one lets commands already sent finish, then closes. */
  async release(): Promise<void> {
    this.users -= 1;
    if (this.users > 0 || this.closed) return;
    this.closed = true;
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch (error) {
      this.noteError(error);
      this.redis.disconnect();
    }
  }

  /** Closes at once: the client this connection was made from has ended. */
  private abandon(): void {
    this.closed = true;
    this.redis.disconnect();
  }
}
