import { errorMessage } from '@streamgate/ingest-core';
import type { CoreLog } from '@streamgate/ingest-core';
import { startRedisOpsPublisher } from '@streamgate/ops/redis';
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
 * The ingest worker's side of the operations stream, on the publisher relay and auth use
 * (`@streamgate/ops/redis`): its own Redis connection (the ops Redis may be another instance,
 * and a slow one must not delay stream writes), one snapshot a second. A snapshot that cannot
 * go now is dropped, counted and replaced by the next one.
 */
export function startIngestOps(options: IngestOpsOptions): { stop(): Promise<void> } {
  const failures = new OpsFailureLog(options.log, options.countFailure);
  let lastRedisError = '';
  const publisher = startRedisOpsPublisher({
    redisUrl: options.redisUrl,
    username: options.username,
    password: options.password,
    connectionName: `streamgate-ingest-ops:${options.source.pod}`,
    stream: options.stream,
    // A collection that throws is skipped by the publisher (readers see a gap in seq) and
    // reported as collect_failed, counted and logged below.
    collect: (seq) => collectIngestSnapshot(options.source, seq),
    onWritten: () => (lastRedisError = ''),
    onFailure: (failure) => failures.failed(failure),
    onRedisError: (error) => {
      // ioredis repeats the same error on every reconnect attempt; once per distinct error is enough.
      if (error.message === lastRedisError) return;
      lastRedisError = error.message;
      options.log.warn({ err: errorMessage(error) }, 'ops redis error');
    },
  });
  return { stop: () => publisher.close() };
}
