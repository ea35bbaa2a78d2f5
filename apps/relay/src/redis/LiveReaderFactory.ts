import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { backoffDelay } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { BatchLiveReader } from './BatchLiveReader.js';
import { IoredisNotifyRedis } from './IoredisNotifyRedis.js';
import { IoredisReaderRedis } from './IoredisReaderRedis.js';
import type { LiveReader, ReadMode } from './LiveReader.js';
import { NotifyReader } from './NotifyReader.js';
import { parseInteger } from './parseReplies.js';
import { RedisBatchReader } from './RedisBatchReader.js';
import type { RedisSourceOptions } from './RedisStreamSource.js';
import { toError } from './redisFailure.js';
import { systemTimerClock } from './TimerClock.js';

export interface LiveReaderFactoryOptions {
  readonly source: RedisSourceOptions;
  /** The source's command connection: CLIENT UNBLOCK for the batched readers. */
  readonly command: () => Redis;
  readonly dropWrongTypes: (keys: readonly StreamName[]) => Promise<readonly StreamName[]>;
  /** A hint that the key may hold a new incarnation: look at it now. */
  readonly suspect: (stream: StreamName) => void;
}

const READ_SOCKET_TIMEOUT_MS = 10_000;

/** Opens the Redis connections of a source and builds its live readers over them. */
export class LiveReaderFactory {
  constructor(private readonly options: LiveReaderFactoryOptions) {}

  create(mode: ReadMode, positions: ReadonlyArray<readonly [StreamName, StreamId]>): LiveReader {
    if (mode === 'notify') return this.notifyReader(positions);
    return new BatchLiveReader(this.options.source.maxStreamsPerReader, (index) => this.batchReader(index), positions);
  }

  connect(role: string, extra: RedisOptions): Redis {
    const source = this.options.source;
    const connection = new Redis(source.target, {
      username: source.username,
      password: source.password,
      connectionName: `${source.connectionName}:${role}`,
      protocol: 2,
      lazyConnect: false,
      // Full-jitter bounded backoff: a restarting Redis is not stampeded by every pod at once.
      retryStrategy: (times) => backoffDelay(times, 50, 5_000),
      ...extra,
    });
    connection.on('error', (error: Error) => source.onError('connection', error));
    let wasReady = false;
    connection.on('ready', () => {
      if (wasReady) source.onReconnect?.(role === 'cmd' ? 'command' : 'reader');
      wasReady = true;
    });
    return connection;
  }

  private notifyReader(positions: ReadonlyArray<readonly [StreamName, StreamId]>): NotifyReader {
    const source = this.options.source;
    // Channels are resubscribed by the reader, in bounded batches, and each key read once its
    // channel is back: ioredis's own resubscribe would send all of them in one command.
    const subscriber = this.connect('notify', { autoResubscribe: false, maxRetriesPerRequest: null });
    const reader = this.connect('nread', {
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: false,
      socketTimeout: READ_SOCKET_TIMEOUT_MS,
    });
    const db = Number(new URL(source.target).pathname.slice(1) || '0');
    return new NotifyReader(
      {
        redis: new IoredisNotifyRedis({ subscriber, reader, db, count: source.readCount }),
        clock: systemTimerClock,
        count: source.readCount,
        sweepIntervalMs: source.notifySweepMs ?? 5_000,
        onEntries: (stream, entries) => source.listener.entries(stream, entries),
        onWrongType: this.options.dropWrongTypes,
        onSuspect: this.options.suspect,
        onError: (error) => source.onError('xread', error),
        onRead: () => source.onRead('xread'),
      },
      positions,
    );
  }

  private batchReader(index: number): RedisBatchReader {
    const source = this.options.source;
    // A blocked XREAD is not resent after a reconnect: the loop re-issues it with the same
    // explicit ids once it knows the new CLIENT ID. It answers within blockMs (nil on timeout), so
    // silence well past it means the socket is dead: without this a half-open reader waits for
    // TCP keepalive (many minutes) while the command connection, and readiness, look fine.
    const connection = this.connect(`read${index}`, {
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: false,
      socketTimeout: source.blockMs + Math.max(5_000, source.blockMs),
    });
    const redis = new IoredisReaderRedis({
      connection,
      unblock: async (clientId) => {
        try {
          return parseInteger(await this.options.command().call('CLIENT', ['UNBLOCK', clientId, 'TIMEOUT']), 'client unblock') === 1;
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
      clock: systemTimerClock,
      onEntries: (stream, entries) => source.listener.entries(stream, entries),
      onWrongType: this.options.dropWrongTypes,
      onError: (error) => source.onError('xread', error),
      onRead: () => source.onRead('xread'),
    });
  }
}
