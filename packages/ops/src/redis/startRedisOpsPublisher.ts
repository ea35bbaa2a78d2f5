import { splitRedisUrl } from '@streamgate/protocol';
import { openRedis } from '@streamgate/redis';
import { OPS_STREAM_MAXLEN } from '../opsSnapshot.js';
import type { OpsSnapshot } from '../opsSnapshot.js';
import { OpsSnapshotPublisher } from '../OpsSnapshotPublisher.js';
import type { OpsPublishFailure } from '../OpsSnapshotPublisher.js';

export interface RedisOpsPublisherOptions {
  /**
   * Where the operations stream lives: any target the apps' config accepts (`redis://`,
   * `rediss://`, `redis-cluster://`, `rediss-cluster://`); credentials in the URL win over
   * `username`/`password`.
   */
  readonly redisUrl: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** CLIENT SETNAME of the connection, e.g. `streamgate-relay-ops:<pod>`. */
  readonly connectionName: string;
  readonly stream: string;
  readonly collect: (seq: number) => OpsSnapshot;
  /** Each snapshot written; `recovered` on the first one after a run of failures. */
  readonly onWritten: (recovered: boolean) => void;
  /** Each failure; `first` when it starts a run of this code (log then, count always). */
  readonly onFailure: (failure: OpsPublishFailure, first: boolean) => void;
  /** Connection errors, which ioredis repeats on every reconnect attempt. */
  readonly onRedisError: (error: Error) => void;
  readonly intervalMs?: number;
}

export interface RedisOpsPublisher {
  /** Stops the loop and publishes one fresh snapshot, the process's last; resolves once written or failed. */
  publishLast(): Promise<void>;
  /** Stops the loop, waits for a publish in flight, closes the connection. */
  close(): Promise<void>;
}

/**
 * An app's operations snapshot loop: `XADD <stream> MAXLEN ~ 2000 * data <json>` once a second on
 * a Redis connection of its own, so a slow or lost operations Redis never delays the app's real
 * work. Relay, auth and ingest all publish through it. Node only (ioredis): the browser-safe
 * schemas are the package's main entry.
 */
export function startRedisOpsPublisher(options: RedisOpsPublisherOptions): RedisOpsPublisher {
  const split = splitRedisUrl(options.redisUrl);
  if (split === null) throw new RangeError(`"${options.redisUrl}" is not a Redis target`); // each app's config refuses it first
  const own = split.username !== undefined || split.password !== undefined;
  const redis = openRedis(split.target, {
    username: own ? split.username : options.username,
    password: own ? split.password : options.password,
    connectionName: options.connectionName,
    // A snapshot is stale within seconds: one that cannot go now is dropped and counted, not
    // queued behind a dead connection, and each XADD gets two seconds.
    enableOfflineQueue: false,
    cluster: { enableOfflineQueue: false },
    node: { maxRetriesPerRequest: 0, commandTimeout: 2_000 },
  });
  redis.on('error', options.onRedisError);
  let failing: OpsPublishFailure['code'] | null = null;
  const publisher = new OpsSnapshotPublisher({
    collect: options.collect,
    sink: async (json) => {
      await redis.xadd(options.stream, 'MAXLEN', '~', String(OPS_STREAM_MAXLEN), '*', 'data', json);
      options.onWritten(failing !== null);
      failing = null;
    },
    onFailure: (failure) => {
      const first = failing !== failure.code;
      failing = failure.code;
      options.onFailure(failure, first);
    },
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
  publisher.start();
  return {
    publishLast: async () => {
      // stop() first: a publish in flight holds a snapshot taken before now, and must not be the last word.
      await publisher.stop();
      await publisher.publishOnce();
    },
    close: async () => {
      await publisher.stop();
      redis.disconnect();
    },
  };
}
