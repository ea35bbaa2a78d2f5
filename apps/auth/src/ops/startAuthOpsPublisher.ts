import type { Logger } from 'pino';
import { startRedisOpsPublisher } from '@streamgate/ops/redis';
import type { RedisOpsPublisher } from '@streamgate/ops/redis';
import type { AuthMetrics } from '../createAuthMetrics.js';
import { AuthSnapshotCollector } from './AuthSnapshotCollector.js';
import type { AuthOpsState } from './AuthSnapshotCollector.js';

export interface AuthOpsPublisherOptions {
  /** AUTH_OPS_REDIS_URL, credentials (if any) included: this connection is the service's own. */
  readonly redisUrl: string;
  readonly stream: string;
  readonly state: AuthOpsState;
  readonly metrics: AuthMetrics;
  readonly log: Logger;
  readonly intervalMs?: number;
}

/** `publishLast()` on shutdown; `close()` after it. */
export type AuthOpsPublisher = RedisOpsPublisher;

/**
 * The auth service's operations snapshot loop, on a Redis connection of its own
 * (`@streamgate/ops/redis`). Failures are counted, logged when publishing starts failing and when
 * it recovers, and never end the process.
 */
export function startAuthOpsPublisher(options: AuthOpsPublisherOptions): AuthOpsPublisher {
  const { metrics, log, stream } = options;
  const collector = new AuthSnapshotCollector(options.state);
  return startRedisOpsPublisher({
    redisUrl: options.redisUrl,
    connectionName: `streamgate-auth-ops:${options.state.pod}`,
    stream,
    collect: (seq) => collector.collect(seq),
    onWritten: (recovered) => {
      metrics.opsSnapshots.inc();
      if (recovered) log.info({ stream }, 'operations snapshots written again');
    },
    onFailure: (failure, first) => {
      metrics.opsSnapshotFailures.inc({ code: failure.code });
      if (first) log.warn({ stream, failure }, 'operations snapshot not written (counted in streamgate_auth_ops_snapshot_failures_total)');
    },
    onRedisError: (error) => log.debug({ err: error.message }, 'ops redis error'),
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
}
