import type { StreamId, StreamName } from '@streamgate/protocol';
import { isClusterClient } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { BatchLiveReader } from './BatchLiveReader.js';
import { ClusterChannels } from './ClusterChannels.js';
import { IoredisClusterNotifyRedis } from './IoredisClusterNotifyRedis.js';
import { IoredisNotifyRedis } from './IoredisNotifyRedis.js';
import { IoredisReaderRedis } from './IoredisReaderRedis.js';
import type { LiveReader, ReadMode } from './LiveReader.js';
import { NotifyReader } from './NotifyReader.js';
import { NodeDeadlineError } from './pipelineByNode.js';
import type { NotifyReaderOptions } from './NotifyReader.js';
import { LiveMessageError } from './parseLiveMessage.js';
import { parseInteger } from './parseReplies.js';
import { SUBSCRIBER_SOCKET_TIMEOUT_MS } from './SubscriberHeartbeat.js';
import { RedisBatchReader } from './RedisBatchReader.js';
import type { RedisSourceOptions } from './RedisSourceOptions.js';
import type { TargetConnections } from './TargetConnections.js';
import { toError } from './redisFailure.js';
import { systemClock } from '@streamgate/protocol';

export interface LiveReaderFactoryOptions {
  readonly source: RedisSourceOptions;
  /** Where the readers' connections are opened (the source's own are opened there too). */
  readonly connections: TargetConnections;
  /** The source's command connection: CLIENT UNBLOCK for the batched readers. */
  readonly command: RedisClient;
  readonly dropWrongTypes: (keys: readonly StreamName[]) => Promise<readonly StreamName[]>;
  /** A hint that the key may hold a new incarnation: look at it now. */
  readonly suspect: (stream: StreamName) => void;
  /** A look found the key missing after it existed (IncarnationTracker.vanished). */
  readonly vanished: (stream: StreamName) => boolean;
  /** A Redis Cluster: some primary does not notify now (its keys are then swept often). */
  readonly unnotified: () => boolean;
}

const READ_SOCKET_TIMEOUT_MS = 10_000;
/** How often a cluster reader's slot map is fetched again, so channels follow a failover soon. */
const CLUSTER_SLOTS_REFRESH_MS = 2_000;
/**
 * A primary's share of a cluster read round not answered within this is abandoned for the round
 * and read again later: a frozen primary delays the other nodes' entries by at most this (once:
 * until its late reply or commandTimeout it is not sent more reads, and its keys wait).
 */
export const CLUSTER_NODE_READ_DEADLINE_MS = 500;

/** Builds a source's live readers over connections opened by its TargetConnections. */
export class LiveReaderFactory {
  constructor(private readonly options: LiveReaderFactoryOptions) {}

  create(mode: ReadMode, positions: ReadonlyArray<readonly [StreamName, StreamId]>): LiveReader {
    if (this.options.connections.cluster) return this.clusterReader(positions);
    if (mode === 'notify') return this.notifyReader(positions);
    return new BatchLiveReader(this.options.source.maxStreamsPerReader, (index) => this.batchReader(index), positions);
  }

  private notifyReader(positions: ReadonlyArray<readonly [StreamName, StreamId]>): NotifyReader {
    const source = this.options.source;
    // Channels are resubscribed by the reader, in bounded batches, and each key read once its
    // channel is back: ioredis's own resubscribe would send all of them in one command.
    const subscriber = this.options.connections.instance('notify', {
      autoResubscribe: false,
      maxRetriesPerRequest: null,
      socketTimeout: SUBSCRIBER_SOCKET_TIMEOUT_MS,
    });
    const reader = this.options.connections.instance('nread', {
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: false,
      socketTimeout: READ_SOCKET_TIMEOUT_MS,
    });
    const db = Number(new URL(source.target).pathname.slice(1) || '0');
    return new NotifyReader(
      {
        redis: new IoredisNotifyRedis({
          subscriber,
          reader,
          db,
          count: source.readCount,
          onPingError: (error) => source.onError('ping', error),
        }),
        ...this.notifyReaderHooks(),
      },
      positions,
    );
  }

  /**
   * A Redis Cluster: always notification-driven (a batched blocking XREAD cannot name keys of
   * several slots). One Cluster client reads, grouped per slot and pipelined per node; one plain
   * pub/sub connection per primary holds the channels of the keys it serves.
   */
  private clusterReader(positions: ReadonlyArray<readonly [StreamName, StreamId]>): NotifyReader {
    const source = this.options.source;
    const reader = this.options.connections.connect(
      'nread',
      // A non-blocking XREAD answers at once: a node silent this long is frozen or gone.
      { maxRetriesPerRequest: null, commandTimeout: READ_SOCKET_TIMEOUT_MS, socketTimeout: READ_SOCKET_TIMEOUT_MS },
      // A read to a node that is gone fails after a few quick retries rather than ioredis's 16 ×
      // 100 ms: the reader retries it anyway (a round waits for no node past CLUSTER_NODE_READ_DEADLINE_MS).
      { slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS, maxRedirections: 6, retryDelayOnFailover: 50 },
    );
    if (!isClusterClient(reader)) throw new Error(`${source.target} is not a Redis Cluster target`);
    const redis = new IoredisClusterNotifyRedis({
      reader,
      count: source.readCount,
      // Not counted here: a node's failure is its keys' read error, which the reader reports once.
      onNodeError: () => undefined,
      nodeDeadlineMs: CLUSTER_NODE_READ_DEADLINE_MS,
      onHandlerError: (error) => source.onError('connection', error),
      onPingError: (error) => source.onError('ping', error),
      connect: (node) => this.options.connections.nodeSubscriber(reader, node),
    });
    return new NotifyReader(
      {
        redis,
        channels: (hooks) => new ClusterChannels({ ...hooks, pubsub: redis, clock: systemClock }),
        unnotified: this.options.unnotified,
        ...this.notifyReaderHooks(),
      },
      positions,
    );
  }

  /** What a notification-driven reader of this source does with what it reads, on a cluster or not. */
  private notifyReaderHooks() {
    const source = this.options.source;
    return {
      clock: systemClock,
      count: source.readCount,
      sweepIntervalMs: source.notifySweepMs ?? 60_000,
      // The hub's own method: an entry goes from the reader to the hub with nothing in between.
      onEntries: source.listener.entries.bind(source.listener),
      onWrongType: this.options.dropWrongTypes,
      onSuspect: this.options.suspect,
      vanished: this.options.vanished,
      // A cluster node past its read deadline is counted apart from reply errors: slow, not wrong;
      // a live message that does not parse apart from both: a producer's bug.
      onError: (error) =>
        source.onError(
          error instanceof NodeDeadlineError ? 'xread_deadline' : error instanceof LiveMessageError ? 'live_message' : 'xread',
          error,
        ),
      onRead: () => source.onRead('xread'),
    } satisfies Partial<NotifyReaderOptions>;
  }

  private batchReader(index: number): RedisBatchReader {
    const source = this.options.source;
    // A blocked XREAD is not resent after a reconnect: the loop re-issues it with the same
    // explicit ids once it knows the new CLIENT ID. It answers within blockMs (nil on timeout), so
    // silence well past it means the socket is dead: without this a half-open reader waits for
    // TCP keepalive (many minutes) while the command connection, and readiness, look fine.
    const connection = this.options.connections.instance(`read${index}`, {
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: false,
      socketTimeout: source.blockMs + Math.max(5_000, source.blockMs),
    });
    const redis = new IoredisReaderRedis({
      connection,
      unblock: async (clientId) => {
        try {
          return parseInteger(await this.options.command.call('CLIENT', ['UNBLOCK', clientId, 'TIMEOUT']), 'client unblock') === 1;
        } catch (thrown) {
          source.onError('unblock', toError(thrown));
          return false;
        }
      },
      blockMs: source.blockMs,
      count: source.readCount,
    });
    return new RedisBatchReader({
      redis,
      clock: systemClock,
      onEntries: source.listener.entries.bind(source.listener),
      onWrongType: this.options.dropWrongTypes,
      onError: (error) => source.onError('xread', error),
      onRead: () => source.onRead('xread'),
      vanished: this.options.vanished,
      onSuspect: this.options.suspect,
    });
  }
}
