import { errorMessage } from '@streamgate/ingest-core';
import type { CoreLog } from '@streamgate/ingest-core';
import { OPS_STREAM_MAXLEN, OpsSnapshotPublisher } from '@streamgate/ops';
import { splitRedisUrl } from '@streamgate/protocol';
import { openRedis } from '@streamgate/redis';
import { collectIngestSnapshot } from './collectIngestSnapshot.js';
import type { IngestOpsSource } from './collectIngestSnapshot.js';
import { OpsFailureLog } from './OpsFailureLog.js';
import type { OpsFailure } from './OpsFailureLog.js';

export interface IngestOpsOptions {
  /** INGEST_OPS_REDIS_URL: an instance or a Redis Cluster; credentials in it win over `username`/`password`. */
  readonly redisUrl: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly stream: string;
  readonly source: IngestOpsSource;
  readonly log: CoreLog;
  /** Counts each failed snapshot by code (ingest_ops_publish_failures_total). */
  readonly countFailure: (code: OpsFailure['code']) => void;
}

/**
 * The ingest worker's side of the operations stream: its own Redis connection (the ops Redis
 * may be another instance, and a slow one must not delay stream writes), one snapshot a second.
 * The connection queues nothing while down and gives each XADD two seconds: a snapshot that
 * cannot go now is dropped, counted and replaced by the next one.
 */
export function startIngestOps(options: IngestOpsOptions): { stop(): Promise<void> } {
  const split = splitRedisUrl(options.redisUrl);
  if (split === null) throw new RangeError('INGEST_OPS_REDIS_URL is not a Redis target'); // the config refuses it first
  const own = split.username !== undefined || split.password !== undefined;
  const redis = openRedis(split.target, {
    username: own ? split.username : options.username,
    password: own ? split.password : options.password,
    connectionName: `streamgate-ingest-ops:${options.source.pod}`,
    enableOfflineQueue: false,
    cluster: { enableOfflineQueue: false },
    node: { maxRetriesPerRequest: 0, commandTimeout: 2_000 },
  });
  let lastRedisError = '';
  redis.on('error', (error: Error) => {
    // ioredis repeats the same error on every reconnect attempt; once per distinct error is enough.
    if (error.message === lastRedisError) return;
    lastRedisError = error.message;
    options.log.warn({ err: errorMessage(error) }, 'ops redis error');
  });
  redis.on('ready', () => (lastRedisError = ''));
  const failures = new OpsFailureLog(options.log, options.countFailure);
  const publisher = new OpsSnapshotPublisher({
    // A collection that throws is skipped by the publisher (readers see a gap in seq) and
    // reported as collect_failed, counted and logged below.
    collect: (seq) => collectIngestSnapshot(options.source, seq),
    sink: async (json) => {
      await redis.xadd(options.stream, 'MAXLEN', '~', String(OPS_STREAM_MAXLEN), '*', 'data', json);
    },
    onFailure: (failure) => failures.failed(failure),
  });
  publisher.start();
  return {
    stop: async () => {
      await publisher.stop();
      redis.disconnect();
    },
  };
}
