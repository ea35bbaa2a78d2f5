import type { Logger } from 'pino';
import type { RelayConfig } from './config.js';
import type { TopicPublisher } from './core/Connection.js';
import { StreamHub } from './core/StreamHub.js';
import type { SourceListener, StreamSource } from './core/StreamSource.js';
import type { RelayReadModeState } from './ops/RelaySnapshotCollector.js';
import { openJetStreamSource } from './openJetStreamSource.js';
import { openTargetSource } from './openTargetSource.js';
import type { RedisStreamSource } from './redis/RedisStreamSource.js';
import type { RelayMetrics } from './RelayMetrics.js';

export interface TargetHubs {
  /** One hub per allowlisted target, Redis and JetStream, keyed by the normalized target. */
  readonly hubs: ReadonlyMap<string, StreamHub>;
  /** The Redis targets' hubs: what demand reporting and Redis-only checks cover. */
  readonly redisHubs: ReadonlyMap<string, StreamHub>;
  readonly redisSources: readonly RedisStreamSource[];
  /** Each Redis target's read mode, once its source has chosen one. */
  readonly readModes: ReadonlyMap<string, RelayReadModeState>;
}

/**
 * A hub per allowlisted target, each reading through its own source: a RedisStreamSource for a
 * Redis target, a JetStreamStreamSource for a JetStream one. The hub is the same for both: the
 * source is the only part that knows which log it reads.
 */
export function openTargetHubs(config: RelayConfig, publisher: TopicPublisher, metrics: RelayMetrics, log: Logger): TargetHubs {
  const hubs = new Map<string, StreamHub>();
  const redisHubs = new Map<string, StreamHub>();
  const redisSources: RedisStreamSource[] = [];
  const readModes = new Map<string, RelayReadModeState>();
  const hubOver = (source: (listener: SourceListener) => StreamSource): StreamHub =>
    new StreamHub({
      // The source delivers to the hub's own listener: no holder between them.
      source,
      publisher,
      metrics: metrics.hub,
      topicPrefix: `${hubs.size}|`,
      catchUpPageSize: config.RELAY_CATCHUP_PAGE_SIZE,
      maxBufferedBytes: config.RELAY_MAX_BACKPRESSURE_BYTES,
      maxPendingCatchUpBytes: config.RELAY_MAX_PENDING_CATCHUP_BYTES,
      maxEntryBytes: config.RELAY_MAX_ENTRY_BYTES,
      lingerMs: config.RELAY_STREAM_LINGER_MS,
    });
  for (const target of config.RELAY_REDIS_ALLOWLIST) {
    readModes.set(target, 'pending');
    const hub = hubOver((listener) => {
      const source = openTargetSource(config, target, metrics, log, listener, (mode) => readModes.set(target, mode));
      redisSources.push(source);
      return source;
    });
    hubs.set(target, hub);
    redisHubs.set(target, hub);
  }
  for (const target of config.RELAY_JETSTREAM_ALLOWLIST) {
    hubs.set(
      target,
      hubOver((listener) => openJetStreamSource(config, target, metrics, log, listener)),
    );
  }
  return { hubs, redisHubs, redisSources, readModes };
}
