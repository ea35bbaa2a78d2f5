import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { OPS_STREAM_MAXLEN, OpsSnapshotPublisher } from '@streamgate/ops';
import type { OpsPublishFailure } from '@streamgate/ops';
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

export interface RelayOpsPublisher {
  /**
   * Stops the loop and publishes one fresh snapshot, the pod's last (the drain ended); resolves
   * once it was written or failed.
   */
  publishLast(): Promise<void>;
  /** Stops the loop, waits for a publish in flight, closes the connection. */
  close(): Promise<void>;
}

/**
 * The operations snapshot loop of a relay pod: XADD once a second on a connection of its own, so
 * a slow or lost ops Redis never delays reads. A failure is counted and logged when publishing
 * starts failing (not once a second), and its recovery is logged; it never ends the process.
 */
export function startRelayOpsPublisher(options: RelayOpsPublisherOptions): RelayOpsPublisher {
  const { metrics, log, stream } = options;
  const url = new URL(options.redisUrl);
  const ownCredentials = url.username !== '' || url.password !== '';
  const redis = new Redis(options.redisUrl, {
    ...(ownCredentials ? {} : { username: options.username, password: options.password }),
    connectionName: `streamgate-relay-ops:${options.state.pod}`,
    maxRetriesPerRequest: 1,
    // A snapshot is stale within seconds: fail it rather than queue it behind a dead connection.
    commandTimeout: 2_000,
  });
  redis.on('error', (error: Error) => log.debug({ err: error.message }, 'ops redis error'));
  let failing: OpsPublishFailure['code'] | null = null;
  const collector = new RelaySnapshotCollector(options.state);
  const publisher = new OpsSnapshotPublisher({
    collect: (seq) => collector.collect(seq),
    sink: async (json) => {
      await redis.xadd(stream, 'MAXLEN', '~', String(OPS_STREAM_MAXLEN), '*', 'data', json);
      metrics.opsPublishes.inc();
      if (failing !== null) log.info({ stream }, 'operations snapshots written again');
      failing = null;
    },
    onFailure: (failure) => {
      metrics.opsPublishFailures.inc({ code: failure.code });
      if (failing === failure.code) return;
      failing = failure.code;
      log.warn({ stream, failure }, 'operations snapshot not written (counted in streamgate_relay_ops_snapshot_failures_total)');
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
