import type { Redis, RedisOptions } from 'ioredis';
import { timeoutAfter } from './timeoutAfter.js';

/*
 * Settings under which ioredis never sends a publish on its own. By default it resends commands
 * that were in flight when a connection dropped (they may already have been applied: a second
 * entry), keeps them for up to 20 reconnects, and queues commands issued while disconnected to
 * send whenever the connection returns (after the caller may have given up and retried). Here a
 * command is written once, to a ready connection, or not at all; whatever happens to it after
 * that is reported to the caller, who decides whether to retry.
 */
const NEVER_RESEND: RedisOptions = {
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  reconnectOnError: null,
  lazyConnect: true,
};

export type ConnectionWait = { ok: true; redis: Redis } | { ok: false; ended: boolean; reason: string };

// One connection per template client, shared by every publisher made from it: code that creates
// a publisher per call (`createPublisher({ redis }).publish(…)`) opens one connection, not one a call.
const byTemplate = new WeakMap<Redis, PublisherConnection>();

/**
 * The publishers' own connection, opened from a caller's client's options (address, auth, TLS,
 * db, retry strategy) with the resend paths turned off. The caller's client sends nothing for a
 * publisher, whatever its settings. It closes when its last publisher closes or when the template
 * client ends.
 */
export class PublisherConnection {
  private readonly redis: Redis;
  private lastError: string | undefined;
  private closed = false;
  private users = 0;
  private readiness: Promise<ConnectionWait> | undefined;

  /** The open connection for `template`, made on first use; call release() once done with it. */
  static acquire(template: Redis): PublisherConnection {
    let connection = byTemplate.get(template);
    if (connection === undefined || connection.closed) {
      connection = new PublisherConnection(template);
      byTemplate.set(template, connection);
    }
    connection.users += 1;
    return connection;
  }

  private constructor(template: Redis) {
    this.redis = template.duplicate({
      ...NEVER_RESEND,
      connectionName: template.options.connectionName ?? 'streamgate-publisher',
    });
    // Between publishes ioredis reports reconnect failures only as events; the last one explains
    // the next publish that finds no connection.
    this.redis.on('error', (error: Error) => {
      this.lastError = error.message;
    });
    if (template.status === 'end') this.abandon();
    else template.once('end', () => this.abandon());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves with the connection once it is ready, or says why not within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<ConnectionWait> {
    if (this.closed) return { ok: false, ended: true, reason: 'the publisher is closed' };
    if (this.redis.status === 'ready') return { ok: true, redis: this.redis };
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
      const onReady = (): void => finish({ ok: true, redis });
      const onEnd = (): void => finish({ ok: false, ended: this.closed, reason: this.withLastError('the connection to redis ended') });
      redis.once('ready', onReady);
      redis.once('end', onEnd);
      // A connection that ended (a retry strategy that gave up) starts over on the next publish.
      if (redis.status === 'wait' || redis.status === 'end') {
        redis.connect().catch((error: unknown) => {
          this.lastError = error instanceof Error ? error.message : String(error);
        });
      }
    });
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
      this.lastError = error instanceof Error ? error.message : String(error);
      this.redis.disconnect();
    }
  }

  /** Closes at once: the client this connection was made from has ended. */
  private abandon(): void {
    this.closed = true;
    this.redis.disconnect();
  }
}
