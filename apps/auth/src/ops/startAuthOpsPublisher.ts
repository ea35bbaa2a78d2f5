import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { OPS_STREAM_MAXLEN, OpsSnapshotPublisher } from '@streamgate/ops';
import type { OpsPublishFailure } from '@streamgate/ops';
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

export interface AuthOpsPublisher {
  /** Stops the loop and publishes one fresh snapshot, the service's last. */
  publishLast(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The auth service's operations snapshot loop, on a Redis connection of its own. Failures are
 * counted, logged when publishing starts failing and when it recovers, and never end the process.
 */
export function startAuthOpsPublisher(options: AuthOpsPublisherOptions): AuthOpsPublisher {
  const { metrics, log, stream } = options;
  const redis = new Redis(options.redisUrl, {
    connectionName: `streamgate-auth-ops:${options.state.pod}`,
    maxRetriesPerRequest: 1,
    // A snapshot is stale within seconds: fail it rather than queue it behind a dead connection.
    commandTimeout: 2_000,
  });
  redis.on('error', (error: Error) => log.debug({ err: error.message }, 'ops redis error'));
  let failing: OpsPublishFailure['code'] | null = null;
  const collector = new AuthSnapshotCollector(options.state);
  const publisher = new OpsSnapshotPublisher({
    collect: (seq) => collector.collect(seq),
    sink: async (json) => {
      await redis.xadd(stream, 'MAXLEN', '~', String(OPS_STREAM_MAXLEN), '*', 'data', json);
      metrics.opsSnapshots.inc();
      if (failing !== null) log.info({ stream }, 'operations snapshots written again');
      failing = null;
    },
    onFailure: (failure) => {
      metrics.opsSnapshotFailures.inc({ code: failure.code });
      if (failing === failure.code) return;
      failing = failure.code;
      log.warn({ stream, failure }, 'operations snapshot not written (counted in streamgate_auth_ops_snapshot_failures_total)');
    },
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
  publisher.start();
  return {
    publishLast: async () => {
      await publisher.stop();
      await publisher.publishOnce();
    },
    close: async () => {
      await publisher.stop();
      redis.disconnect();
    },
  };
}
