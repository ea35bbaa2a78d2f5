import type { Logger } from 'pino';
import { RedisDemandRegistry } from '@streamgate/demand';
import { openRedis } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import type { RelayConfig } from '../config.js';
import type { StreamHub } from '../core/StreamHub.js';
import { DemandReporter } from './DemandReporter.js';

/** Starts demand heartbeats when RELAY_DEMAND_PREFIXES names ingest-backed streams; null otherwise. */
export function startDemandReporter(config: RelayConfig, hubs: ReadonlyMap<string, StreamHub>, log: Logger): { close(): void } | null {
  if (config.RELAY_DEMAND_PREFIXES.length === 0) return null;
  const clients: RedisClient[] = [];
  const reporter = new DemandReporter({
    prefixes: config.RELAY_DEMAND_PREFIXES,
    intervalMs: config.RELAY_DEMAND_INTERVAL_MS,
    ttlMs: config.RELAY_DEMAND_TTL_MS,
    targets: [...hubs].map(([target, hub]) => {
      // openRedis: a cluster target's demand key lives on whichever node serves its slot.
      const redis = openRedis(target, {
        username: config.RELAY_REDIS_USERNAME,
        password: config.RELAY_REDIS_PASSWORD,
        connectionName: `streamgate-relay-demand:${config.RELAY_NODE_ID}`,
        node: { maxRetriesPerRequest: 1 },
      });
      redis.on('error', (error: Error) => log.debug({ err: error.message, target }, 'demand redis error'));
      clients.push(redis);
      return { target, sink: new RedisDemandRegistry(redis), streams: () => hub.streamsWithSubscribers() };
    }),
    onError: (target, error) => log.warn({ err: error, target }, 'demand heartbeat failed'),
  });
  return {
    close: () => {
      reporter.close();
      for (const c of clients) c.disconnect();
    },
  };
}
