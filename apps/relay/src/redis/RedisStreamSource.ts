import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { EntriesListener, SourceError, SourceResult, StreamInfo, StreamSource } from '../core/StreamSource.js';
import { RedisBatchReader } from './RedisBatchReader.js';
import { parseEntries, parseXinfo } from './parseReplies.js';

export interface RedisSourceOptions {
  /** Canonical target URL from the token (no credentials). */
  readonly target: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly blockMs: number;
  readonly readCount: number;
  readonly maxStreamsPerReader: number;
  readonly onEntries: EntriesListener;
  readonly onError: (operation: string, error: Error) => void;
  readonly onRead: (kind: 'xread' | 'xrange' | 'xinfo') => void;
  readonly connectionName: string;
}

/**
 * StreamSource over one Redis instance: one command connection (XINFO, XRANGE, CLIENT UNBLOCK)
 * and as few blocking readers as the stream count needs (`maxStreamsPerReader` each), so a pod
 * serving a thousand streams holds a handful of connections, not a thousand.
 */
export class RedisStreamSource implements StreamSource {
  private readonly command: Redis;
  private readonly readers: RedisBatchReader[] = [];
  private readonly readerOf = new Map<StreamName, RedisBatchReader>();

  constructor(private readonly options: RedisSourceOptions) {
    this.command = this.connect('cmd', { maxRetriesPerRequest: 1 });
    this.command.on('error', (error: Error) => options.onError('connection', error));
  }

  get healthy(): boolean {
    return this.command.status === 'ready';
  }

  async inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    try {
      const pipeline = this.command.pipeline();
      pipeline.call('XINFO', ['STREAM', stream]);
      if (probe !== undefined) pipeline.call('XRANGE', [stream, probe, probe, 'COUNT', 1]);
      const replies = (await pipeline.exec()) ?? [];
      this.options.onRead('xinfo');
      const [infoErr, infoReply] = replies[0] ?? [new Error('no reply'), null];
      let info: StreamInfo | null = null;
      if (infoErr !== null) {
        if (/no such key/i.test(infoErr.message)) info = null;
        else return { ok: false, error: this.classify(infoErr) };
      } else {
        info = parseXinfo(infoReply);
      }
      let probeExists = false;
      if (probe !== undefined) {
        const [rangeErr, rangeReply] = replies[1] ?? [new Error('no reply'), null];
        if (rangeErr !== null) return { ok: false, error: this.classify(rangeErr) };
        probeExists = parseEntries(rangeReply).length > 0;
      }
      return { ok: true, value: { info, probeExists } };
    } catch (error) {
      return { ok: false, error: this.classify(error as Error) };
    }
  }

  async range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<ReturnType<typeof parseEntries>>> {
    try {
      const reply = await this.command.call('XRANGE', [stream, `(${after}`, '+', 'COUNT', count]);
      this.options.onRead('xrange');
      return { ok: true, value: parseEntries(reply) };
    } catch (error) {
      return { ok: false, error: this.classify(error as Error) };
    }
  }

  watch(stream: StreamName, after: StreamId): void {
    if (this.readerOf.has(stream)) return;
    let reader = this.readers.find((r) => r.size < this.options.maxStreamsPerReader);
    if (reader === undefined) {
      reader = this.newReader();
      this.readers.push(reader);
    }
    reader.add(stream, after);
    this.readerOf.set(stream, reader);
  }

  unwatch(stream: StreamName): void {
    this.readerOf.get(stream)?.remove(stream);
    this.readerOf.delete(stream);
  }

  get connectionCount(): number {
    return 1 + this.readers.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.readers.map((r) => r.close()));
    this.command.disconnect();
  }

  private newReader(): RedisBatchReader {
    const index = this.readers.length;
    // A blocked XREAD must wait as long as it likes; reconnects resend it with the same ids.
    const connection = this.connect(`read${index}`, { maxRetriesPerRequest: null });
    connection.on('error', (error: Error) => this.options.onError('connection', error));
    return new RedisBatchReader({
      connection,
      unblock: async (clientId) => {
        try {
          return (await this.command.call('CLIENT', ['UNBLOCK', clientId, 'TIMEOUT'])) === 1;
        } catch (error) {
          this.options.onError('unblock', error as Error);
          return false;
        }
      },
      onEntries: this.options.onEntries,
      blockMs: this.options.blockMs,
      count: this.options.readCount,
      onError: (error) => this.options.onError('xread', error),
      onRead: () => this.options.onRead('xread'),
    });
  }

  private connect(role: string, extra: RedisOptions): Redis {
    return new Redis(this.options.target, {
      username: this.options.username,
      password: this.options.password,
      connectionName: `${this.options.connectionName}:${role}`,
      protocol: 2,
      lazyConnect: false,
      // Bounded exponential backoff with jitter: a restarting Redis is not stampeded by every pod.
      retryStrategy: (times) => Math.min(5_000, 50 * 2 ** Math.min(times, 7)) * (0.5 + Math.random() / 2),
      ...extra,
    });
  }

  private classify(error: Error): SourceError {
    if (/WRONGTYPE/.test(error.message)) {
      return { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' };
    }
    return { code: 'source_unavailable', retryable: true, message: error.message };
  }
}
