import type { Logger } from 'pino';
import { startRedisOpsPublisher } from '@streamgate/ops/redis';
import type { RedisOpsPublisher } from '@streamgate/ops/redis';
import type { RelayMetrics } from '../RelayMetrics.js';
import { RelaySnapshotCollector } from './RelaySnapshotCollector.js';
import type { RelayOpsState } from './RelaySnapshotCollector.js';

export interface RelayOpsPublisherOptions {
  /** RELAY_OPS_REDIS_URL: credentials in it win; otherwise the relay's own (RELAY_REDIS_USERNAME / _PASSWORD). */
  readonly redisUrl: string;
  readonly stream: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly state: RelayOpsState;
  readonly metrics: RelayMetrics;
  readonly log: Logger;
  readonly intervalMs?: number;
}

/** `publishLast()` when the drain ended; `close()` on exit. */
export type RelayOpsPublisher = RedisOpsPublisher;

/**
 * The operations snapshot loop of a relay pod, on a connection of its own (`@streamgate/ops/redis`),
 * so a slow or lost ops Redis never delays reads. A failure is counted and logged when publishing
 * starts failing (not once a second), and its recovery is logged; it never ends the process.
 */
export function startRelayOpsPublisher(options: RelayOpsPublisherOptions): RelayOpsPublisher {
  const { metrics, log, stream } = options;
  const collector = new RelaySnapshotCollector(options.state);
  return startRedisOpsPublisher({
    redisUrl: options.redisUrl,
    username: options.username,
    password: options.password,
    connectionName: `streamgate-relay-ops:${options.state.pod}`,
    stream,
    collect: (seq) => collector.collect(seq),
    onWritten: (recovered) => {
      metrics.opsPublishes.inc();
      if (recovered) log.info({ stream }, 'operations snapshots written again');
    },
    onFailure: (failure, first) => {
      metrics.opsPublishFailures.inc({ code: failure.code });
      if (first) log.warn({ stream, failure }, 'operations snapshot not written (counted in streamgate_relay_ops_snapshot_failures_total)');
    },
    onRedisError: (error) => log.debug({ err: error.message }, 'ops redis error'),
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
}
