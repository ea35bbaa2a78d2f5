import { Redis } from 'ioredis';
import type { ChainableCommander, RedisOptions } from 'ioredis';
import { backoffDelay } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { RangePage, SourceListener, SourceResult, StreamInfo, StreamSource } from '../core/StreamSource.js';
import { IoredisReaderRedis } from './IoredisReaderRedis.js';
import { ReaderPool } from './ReaderPool.js';
import { RedisBatchReader } from './RedisBatchReader.js';
import { systemTimerClock } from './TimerClock.js';
import { IncarnationTracker } from './IncarnationTracker.js';
import type { CheckSnapshot, IncarnationProbe, KeySighting } from './IncarnationTracker.js';
import { parseEntries, parseIncarnationMark, parseInteger, parseTypeName, parseXinfo } from './parseReplies.js';
import { sourceError, toError } from './redisFailure.js';

export interface RedisSourceOptions {
  /** Canonical target URL from the token (no credentials). */
  readonly target: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly blockMs: number;
  readonly readCount: number;
  readonly maxStreamsPerReader: number;
  readonly listener: SourceListener;
  readonly onError: (operation: string, error: Error) => void;
  /** `check`: one pipelined look at a group of watched keys for a new incarnation. */
  readonly onRead: (kind: 'xread' | 'xrange' | 'xinfo' | 'check') => void;
  /** A watched key was found holding a new incarnation (and its subscribers were told). */
  readonly onRecreated?: (stream: StreamName) => void;
  /** Pause between two checks of up to 1,000 watched keys for a new incarnation. Default 1 000 ms. */
  readonly recreationCheckIntervalMs?: number;
  /** A connection became ready again after losing its server. */
  readonly onReconnect?: (connection: 'command' | 'reader') => void;
  readonly connectionName: string;
  /** How often the command connection is probed with PING. Default 1 000 ms. */
  readonly probeIntervalMs?: number;
  /** A PING unanswered this long marks the source unhealthy until one is answered. Default 2 000 ms. */
  readonly probeTimeoutMs?: number;
}

/** What `exec` resolves to: one `[error, reply]` pair per queued command, in order. */
type PipelineReplies = ReadonlyArray<[Error | null, unknown]>;

const COMMAND_SOCKET_TIMEOUT_MS = 10_000;

/**
 * StreamSource over one Redis instance: one command connection (XINFO, XRANGE, CLIENT UNBLOCK)
 * and as few blocking readers as the stream count needs (`maxStreamsPerReader` each), so a pod
 * serving a thousand streams holds a handful of connections, not a thousand.
 */
export class RedisStreamSource implements StreamSource {
  private readonly command: Redis;
  private readonly pool: ReaderPool<RedisBatchReader>;
  private readonly incarnations: IncarnationTracker;
  private readonly probeTimer: NodeJS.Timeout;
  private probeSentAt: number | null = null;

  constructor(private readonly options: RedisSourceOptions) {
    // The probe keeps a command outstanding every second, so a connection that stops delivering
    // data for this long is dead (half-open after a partition or a host loss) and is replaced.
    this.command = this.connect('cmd', { maxRetriesPerRequest: 1, socketTimeout: COMMAND_SOCKET_TIMEOUT_MS });
    this.command.on('error', (error: Error) => options.onError('connection', error));
    this.pool = new ReaderPool(options.maxStreamsPerReader, (index) => this.newReader(index));
    this.incarnations = new IncarnationTracker({
      probe: this.probeIncarnations,
      clock: systemTimerClock,
      cursorOf: (stream) => this.pool.reader(stream)?.cursor(stream),
      onNewIncarnation: (stream) => this.restart(stream),
      onError: (error) => options.onError('check', error),
      onCheck: () => options.onRead('check'),
      ...(options.recreationCheckIntervalMs === undefined ? {} : { intervalMs: options.recreationCheckIntervalMs }),
    });
    this.probeTimer = setInterval(() => this.probe(), options.probeIntervalMs ?? 1_000);
    this.probeTimer.unref();
  }

  /**
   * Connected, and answering. A frozen or partitioned Redis keeps its sockets open (ioredis still
   * says `ready`) while every read waits forever; only an unanswered PING shows it.
   */
  get healthy(): boolean {
    const stalled = this.probeSentAt !== null && Date.now() - this.probeSentAt > (this.options.probeTimeoutMs ?? 2_000);
    return !stalled && this.command.status === 'ready' && this.pool.ready;
  }

  /** One PING at a time: a stalled server is not sent a pile of them. */
  private probe(): void {
    if (this.probeSentAt !== null || this.command.status !== 'ready') return;
    this.probeSentAt = Date.now();
    this.command.ping().then(
      () => (this.probeSentAt = null),
      (thrown: unknown) => {
        this.probeSentAt = null;
        this.options.onError('ping', toError(thrown));
      },
    );
  }

  async inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    const snapshot = this.incarnations.snapshot(stream);
    const replies = await this.transaction((tx) => {
      tx.call('EXISTS', [stream]);
      tx.call('XINFO', ['STREAM', stream]);
      if (probe !== undefined) tx.call('XRANGE', [stream, probe, probe, 'COUNT', 1]);
    });
    if (!replies.ok) return replies;
    this.options.onRead('xinfo');
    const info = this.info(replies.value, stream, snapshot);
    if (!info.ok) return info;
    if (probe === undefined) return { ok: true, value: { info: info.value, probeExists: false } };
    const probeExists = this.reply(replies.value, 2, (r) => parseEntries(r).length > 0);
    if (!probeExists.ok) return probeExists;
    return { ok: true, value: { info: info.value, probeExists: probeExists.value } };
  }

  async range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<RangePage>> {
    const snapshot = this.incarnations.snapshot(stream);
    const replies = await this.transaction((tx) => {
      tx.call('EXISTS', [stream]);
      tx.call('XINFO', ['STREAM', stream]);
      tx.call('XRANGE', [stream, after, after, 'COUNT', 1]);
      // As bytes: parseEntries checks the relayed values are UTF-8 before decoding them.
      tx.callBuffer('XRANGE', [stream, `(${after}`, '+', 'COUNT', count]);
    });
    if (!replies.ok) return replies;
    this.options.onRead('xrange');
    const info = this.info(replies.value, stream, snapshot);
    if (!info.ok) return info;
    const afterExists = this.reply(replies.value, 2, (r) => parseEntries(r).length > 0);
    if (!afterExists.ok) return afterExists;
    const entries = this.reply(replies.value, 3, parseEntries);
    if (!entries.ok) return entries;
    return { ok: true, value: { entries: entries.value, info: info.value, afterExists: afterExists.value } };
  }

  watch(stream: StreamName, after: StreamId): void {
    this.pool.watch(stream, after);
    this.incarnations.track(stream);
  }

  unwatch(stream: StreamName): void {
    this.incarnations.untrack(stream);
    this.pool.unwatch(stream);
  }

  get connectionCount(): number {
    return 1 + this.pool.readerCount;
  }

  async close(): Promise<void> {
    clearInterval(this.probeTimer);
    this.incarnations.close();
    await this.pool.close();
    this.command.disconnect();
  }

  /**
   * The commands `build` queues, as one MULTI: the existence check, the metadata and the page
   * describe the same moment, so a key deleted in between cannot pass for a missing one.
   */
  private async transaction(build: (tx: ChainableCommander) => void): Promise<SourceResult<PipelineReplies>> {
    try {
      const tx = this.command.multi();
      build(tx);
      return { ok: true, value: (await tx.exec()) ?? [] };
    } catch (thrown) {
      return { ok: false, error: sourceError(toError(thrown)) };
    }
  }

  /** The one normalisation of a reply: its error as a SourceError, or its value parsed. */
  private reply<T>(replies: PipelineReplies, index: number, parse: (value: unknown) => T): SourceResult<T> {
    const [err, value] = replies[index] ?? [new Error(`no reply ${index} in a transaction`), null];
    if (err !== null) return { ok: false, error: sourceError(err) };
    try {
      return { ok: true, value: parse(value) };
    } catch (thrown) {
      return { ok: false, error: sourceError(toError(thrown)) };
    }
  }

  /**
   * Replies 0 and 1 of a transaction are EXISTS and XINFO STREAM of the key. For a watched key
   * they are also a sighting of its incarnation: a resume after a key was recreated shows it
   * before any periodic check would.
   */
  private info(replies: PipelineReplies, stream: StreamName, snapshot: CheckSnapshot | undefined): SourceResult<StreamInfo | null> {
    const exists = this.reply(replies, 0, (r) => parseInteger(r, 'exists') === 1);
    if (!exists.ok) return exists;
    // A missing key makes XINFO answer an error: there is nothing to parse, and nothing wrong.
    const info = exists.value ? this.reply(replies, 1, parseXinfo) : { ok: true as const, value: null };
    if (info.ok && snapshot !== undefined) {
      // entries-added is left out: parseXinfo stands the length in for it on servers without it.
      const sighting: KeySighting =
        info.value === null ? { exists: false } : { exists: true, lastGeneratedId: info.value.lastGeneratedId, entriesAdded: null };
      this.incarnations.observe(stream, snapshot, sighting);
    }
    return info;
  }

  /**
   * One pipeline of EXISTS + XINFO STREAM per key. A key whose reply is an error (it holds
   * another type: the reader reports that; or it was deleted between the two) is not judged
   * this time round; nor is any while the command connection is down.
   */
  private readonly probeIncarnations: IncarnationProbe = async (keys) => {
    // While Redis is away the checks would only queue up behind the reconnect; the next round looks.
    if (this.command.status !== 'ready') return keys.map(() => null);
    const pipeline = this.command.pipeline();
    for (const key of keys) {
      pipeline.call('EXISTS', [key]);
      pipeline.call('XINFO', ['STREAM', key]);
    }
    const replies = (await pipeline.exec()) ?? [];
    return keys.map((_, i): KeySighting | null => {
      const exists = this.reply(replies, 2 * i, (r) => parseInteger(r, 'exists') === 1);
      if (!exists.ok) return null;
      if (!exists.value) return { exists: false };
      const mark = this.reply(replies, 2 * i + 1, parseIncarnationMark);
      return mark.ok ? { exists: true, ...mark.value } : null;
    });
  };

  /** The key holds a new incarnation: its reader starts it over, then its subscribers are told. */
  private restart(stream: StreamName): void {
    if (this.pool.reader(stream)?.restart(stream) !== true) return;
    this.options.onRecreated?.(stream);
    this.options.listener.reset(stream);
  }

  /** Finds the keys that made a batched XREAD fail with WRONGTYPE and takes them out of reading. */
  private readonly dropWrongTypes = async (keys: readonly StreamName[]): Promise<readonly StreamName[]> => {
    try {
      const pipeline = this.command.pipeline();
      for (const key of keys) pipeline.call('TYPE', [key]);
      const replies = (await pipeline.exec()) ?? [];
      const bad = keys.filter((_, i) => {
        const type = this.reply(replies, i, parseTypeName);
        return type.ok && type.value !== 'stream' && type.value !== 'none';
      });
      for (const stream of bad) {
        this.pool.forget(stream);
        this.incarnations.untrack(stream);
        this.options.listener.failed(stream, { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' });
      }
      return bad;
    } catch (thrown) {
      this.options.onError('type', toError(thrown));
      return [];
    }
  };

  private newReader(index: number): RedisBatchReader {
    // A blocked XREAD is not resent after a reconnect: the loop re-issues it with the same
    // explicit ids once it knows the new CLIENT ID. It answers within blockMs (nil on timeout), so silence well past it means the
    // socket is dead: without this a half-open reader waits for TCP keepalive (many minutes)
    // while the command connection, and readiness, look fine.
    const connection = this.connect(`read${index}`, {
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: false,
      socketTimeout: this.options.blockMs + Math.max(5_000, this.options.blockMs),
    });
    connection.on('error', (error: Error) => this.options.onError('connection', error));
    const redis = new IoredisReaderRedis({
      connection,
      unblock: async (clientId) => {
        try {
          return parseInteger(await this.command.call('CLIENT', ['UNBLOCK', clientId, 'TIMEOUT']), 'client unblock') === 1;
        } catch (thrown) {
          this.options.onError('unblock', toError(thrown));
          return false;
        }
      },
      blockMs: this.options.blockMs,
      count: this.options.readCount,
    });
    return new RedisBatchReader({
      redis,
      clock: systemTimerClock,
      onEntries: (stream, entries) => this.options.listener.entries(stream, entries),
      onWrongType: this.dropWrongTypes,
      onError: (error) => this.options.onError('xread', error),
      onRead: () => this.options.onRead('xread'),
    });
  }

  private connect(role: string, extra: RedisOptions): Redis {
    const connection = new Redis(this.options.target, {
      username: this.options.username,
      password: this.options.password,
      connectionName: `${this.options.connectionName}:${role}`,
      protocol: 2,
      lazyConnect: false,
      // Full-jitter bounded backoff: a restarting Redis is not stampeded by every pod at once.
      retryStrategy: (times) => backoffDelay(times, 50, 5_000),
      ...extra,
    });
    let wasReady = false;
    connection.on('ready', () => {
      if (wasReady) this.options.onReconnect?.(role === 'cmd' ? 'command' : 'reader');
      wasReady = true;
    });
    return connection;
  }
}
