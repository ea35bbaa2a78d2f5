import type { Redis } from 'ioredis';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { liveChannel } from '@streamgate/redis';
import { ChannelNames } from './ChannelNames.js';
import type { KeyRead, NotifyRedis } from './NotifyRedis.js';
import { parseLiveMessage } from './parseLiveMessage.js';
import type { LiveMessage } from './parseLiveMessage.js';
import { parseXread } from './parseReplies.js';
import { toError } from './redisFailure.js';
import { startHeartbeat } from './SubscriberHeartbeat.js';

export interface IoredisNotifyOptions {
  /** For SUBSCRIBE only; created with `autoResubscribe: false` (the reader re-subscribes in batches). */
  readonly subscriber: Redis;
  /** For the non-blocking reads; created with `autoResendUnfulfilledCommands: false`. */
  readonly reader: Redis;
  /** The database the target URL names: keyspace channels are per database. */
  readonly db: number;
  readonly count: number;
  /** A heartbeat PING of the pub/sub connection failed (SubscriberHeartbeat). */
  readonly onPingError: (error: Error) => void;
}

/** NotifyRedis over two ioredis connections; the pub/sub one holds each key's keyspace and live channels. */
export class IoredisNotifyRedis implements NotifyRedis {
  private readonly prefix: string;
  private readonly eventListeners: Array<(key: StreamName, event: string) => void> = [];
  private readonly liveListeners: Array<(key: StreamName, message: LiveMessage | null) => void> = [];
  private readonly stopHeartbeat: () => void;

  constructor(private readonly options: IoredisNotifyOptions) {
    this.prefix = `__keyspace@${options.db}__:`;
    this.stopHeartbeat = startHeartbeat(options.subscriber, options.onPingError);
    // As bytes: a live message's data is checked to be UTF-8 before it is decoded (parseLiveMessage).
    const names = new ChannelNames(options.db);
    options.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const keyspaceKey = names.keyspaceKey(channel);
      if (keyspaceKey !== null) {
        const event = names.event(message);
        for (const listener of this.eventListeners) listener(keyspaceKey, event);
        return;
      }
      const key = names.liveKey(channel);
      if (key === null) return;
      const live = parseLiveMessage(message);
      for (const listener of this.liveListeners) listener(key, live);
    });
  }

  readonly connectionCount = 2;

  get readReady(): boolean {
    return this.options.reader.status === 'ready';
  }

  get subscriberReady(): boolean {
    return this.options.subscriber.status === 'ready';
  }

  async read(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    const pipeline = this.options.reader.pipeline();
    // As bytes: parseEntries checks the relayed values are UTF-8 before decoding them.
    for (const [key, id] of reads) pipeline.callBuffer('XREAD', ['COUNT', this.options.count, 'STREAMS', key, id]);
    const replies = (await pipeline.exec()) ?? [];
    return reads.map((_, i): KeyRead => {
      const [error, reply] = replies[i] ?? [new Error(`no reply ${i} in a pipelined read`), null];
      if (error !== null) return { ok: false, error };
      try {
        return { ok: true, entries: parseXread(reply)[0]?.[1] ?? [] };
      } catch (thrown) {
        return { ok: false, error: toError(thrown) };
      }
    });
  }

  async readGrouped(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    let batches;
    try {
      const args = ['COUNT', String(this.options.count), 'STREAMS', ...reads.map(([key]) => key), ...reads.map(([, id]) => id)];
      batches = new Map(parseXread(await this.options.reader.callBuffer('XREAD', args)));
    } catch (thrown) {
      const error = toError(thrown);
      return reads.map(() => ({ ok: false, error }));
    }
    return reads.map(([key]) => ({ ok: true, entries: batches.get(key) ?? [] }));
  }

  async subscribe(keys: readonly StreamName[]): Promise<void> {
    await this.options.subscriber.subscribe(...this.channels(keys));
  }

  async unsubscribe(keys: readonly StreamName[]): Promise<void> {
    await this.options.subscriber.unsubscribe(...this.channels(keys));
  }

  /** Each key's keyspace channel and, when it has one, its live channel. */
  private channels(keys: readonly StreamName[]): string[] {
    const channels: string[] = [];
    for (const key of keys) {
      channels.push(this.prefix + key);
      const live = liveChannel(key, this.options.db);
      if (live !== null) channels.push(live);
    }
    return channels;
  }

  onEvent(listener: (key: StreamName, event: string) => void): void {
    this.eventListeners.push(listener);
  }

  onLive(listener: (key: StreamName, message: LiveMessage | null) => void): void {
    this.liveListeners.push(listener);
  }

  onSubscriberReady(listener: () => void): void {
    this.options.subscriber.on('ready', listener);
  }

  onSubscriberClose(listener: () => void): void {
    this.options.subscriber.on('close', listener);
  }

  onReadClose(listener: () => void): void {
    this.options.reader.on('close', listener);
  }

  disconnect(): void {
    this.stopHeartbeat();
    this.options.subscriber.disconnect();
    this.options.reader.disconnect();
  }
}
