import type { Logger } from 'pino';
import { RedisDemandRegistry } from '@streamgate/demand';
import { openRedis } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import type { RelayConfig } from '../config.js';
import type { DemandMetrics } from './DemandMetrics.js';
import { DemandReporter } from './DemandReporter.js';
import { demandFeeds } from './demandFeeds.js';
import type { SubscribedStreams } from './demandFeeds.js';

export interface DemandReporterHubs {
  /** One per RELAY_REDIS_ALLOWLIST target. */
  readonly redis: ReadonlyMap<string, SubscribedStreams>;
  /** One per RELAY_JETSTREAM_ALLOWLIST target: their demand goes to RELAY_JETSTREAM_DEMAND_TARGET. */
  readonly jetStream: ReadonlyMap<string, SubscribedStreams>;
}

/** Starts demand heartbeats when RELAY_DEMAND_PREFIXES names ingest-backed streams; null otherwise. */
export function startDemandReporter(
  config: RelayConfig,
  hubs: DemandReporterHubs,
  metrics: DemandMetrics,
  log: Logger,
): { close(): void } | null {
  if (config.RELAY_DEMAND_PREFIXES.length === 0) return null;
  const feeds = demandFeeds(hubs.redis, hubs.jetStream, config.RELAY_JETSTREAM_DEMAND_TARGET);
  if (hubs.jetStream.size > 0) {
    log.info(
      { demandTarget: config.RELAY_JETSTREAM_DEMAND_TARGET, jetStreamTargets: [...hubs.jetStream.keys()] },
      'demand for streams on JetStream targets is recorded in RELAY_JETSTREAM_DEMAND_TARGET',
    );
  }
  const clients: RedisClient[] = [];
  // Log a target's failures when they start and when they end; each one is counted.
  const failing = new Set<string>();
  const reporter = new DemandReporter({
    prefixes: config.RELAY_DEMAND_PREFIXES,
    intervalMs: config.RELAY_DEMAND_INTERVAL_MS,
    ttlMs: config.RELAY_DEMAND_TTL_MS,
    targets: [...feeds].map(([target, streams]) => {
      // openRedis: a cluster target's demand key lives on whichever node serves its slot.
      const redis = openRedis(target, {
        username: config.RELAY_REDIS_USERNAME,
        password: config.RELAY_REDIS_PASSWORD,
        connectionName: `streamgate-relay-demand:${config.RELAY_NODE_ID}`,
        node: { maxRetriesPerRequest: 1 },
      });
      redis.on('error', (error: Error) => log.debug({ err: error.message, target }, 'demand redis error'));
      clients.push(redis);
      return { target, sink: new RedisDemandRegistry(redis), streams };
    }),
    onError: (target, error) => {
      metrics.failed(target);
      if (failing.has(target)) return;
      failing.add(target);
      log.warn({ err: error, target }, 'demand heartbeat failed (each failure counted in streamgate_relay_demand_heartbeats_total)');
    },
    onReport: (target, streams) => {
      metrics.reported(target, streams);
      if (streams > 0 && failing.delete(target)) log.info({ target }, 'demand heartbeats sent again');
    },
  });
  return {
    close: () => {
      reporter.close();
      for (const c of clients) c.disconnect();
    },
  };
}
