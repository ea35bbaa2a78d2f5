import type { Logger } from 'pino';
import { parseRedisTarget } from '@streamgate/protocol';
import type { RelayConfig } from './config.js';
import type { SourceListener } from './core/StreamSource.js';
import type { ReadMode } from './redis/LiveReader.js';
import { RedisStreamSource } from './redis/RedisStreamSource.js';
import type { RelayMetrics } from './RelayMetrics.js';

/**
 * One allowlisted target's RedisStreamSource, delivering to `listener` (its hub's, handed on
 * as it is), its errors, reads and modes logged and counted; `onReadMode` hears the mode in
 * force once it is logged and gauged.
 */
export function openTargetSource(
  config: RelayConfig,
  target: string,
  metrics: RelayMetrics,
  log: Logger,
  listener: SourceListener,
  onReadMode: (mode: ReadMode) => void,
): RedisStreamSource {
  if (parseRedisTarget(target)?.kind === 'cluster') metrics.clusterNodesWithoutNotify.set({ target }, 0);
  return new RedisStreamSource({
    target,
    username: config.RELAY_REDIS_USERNAME,
    password: config.RELAY_REDIS_PASSWORD,
    blockMs: config.RELAY_XREAD_BLOCK_MS,
    readCount: config.RELAY_XREAD_COUNT,
    maxStreamsPerReader: config.RELAY_MAX_STREAMS_PER_READER,
    connectionName: `streamgate-relay:${config.RELAY_NODE_ID}`,
    listener,
    onError: (operation, error) => {
      metrics.redisErrors.inc({ operation });
      log.warn({ err: error, operation, target }, 'redis error');
    },
    onRead: (kind) => metrics.redisReads.inc({ kind }),
    onRecreated: (stream, cause) => {
      metrics.redisStreamResets.inc({ cause });
      if (cause === 'recreated') log.info({ stream, target, cause }, 'stream recreated under its readers: read again from its start');
      else
        log.warn(
          { stream, target, cause },
          'stream lost_in_failover: entries the relay delivered are gone from the server (a failover to a replica that had not copied them); read again from its start',
        );
    },
    onReconnect: (connection) => metrics.redisReconnects.inc({ connection }),
    readMode: config.RELAY_READ_MODE,
    readModeCheckMs: config.RELAY_READ_MODE_CHECK_MS,
    notifySweepMs: config.RELAY_NOTIFY_SWEEP_MS,
    onReadMode: (mode, previous) => {
      metrics.readMode.set({ target, mode }, 1);
      metrics.readMode.set({ target, mode: mode === 'notify' ? 'batch' : 'notify' }, 0);
      log.info(
        { target, mode, previous, requested: config.RELAY_READ_MODE },
        mode === 'notify'
          ? 'live reads woken by keyspace notifications'
          : 'live reads by batched blocking XREAD (the server does not notify for stream keys: notify-keyspace-events lacks K and t)',
      );
      onReadMode(mode);
    },
    onNodesWithoutNotify: (nodes) => {
      metrics.clusterNodesWithoutNotify.set({ target }, nodes.length);
      if (nodes.length === 0) log.info({ target }, 'every cluster primary notifies for stream keys');
      else
        log.warn(
          { target, nodes },
          'cluster primaries without keyspace notifications for streams (notify-keyspace-events lacks K and t): their streams are read by the sweep only, every 5 s (RELAY_NOTIFY_SWEEP_MS if shorter); set notify-keyspace-events Kt on every node',
        );
    },
  });
}
