import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { StreamEntry } from '../../core/StreamSource.js';
import type { KeyRead, NotifyRedis } from '../NotifyRedis.js';
import type { LiveMessage } from '../parseLiveMessage.js';

interface Pending {
  readonly kind: 'subscribe' | 'unsubscribe';
  readonly keys: readonly StreamName[];
  readonly resolve: () => void;
}

/**
 * An in-memory Redis for one NotifyReader: streams as arrays, keyspace channels that a write
 * publishes to, SUBSCRIBE confirmations the test releases, and a pub/sub connection it can drop.
 */
export class FakeNotifyRedis implements NotifyRedis {
  private readonly streams = new Map<StreamName, StreamEntry[]>();
  private readonly channels = new Set<StreamName>();
  private readonly pendingCommands: Pending[] = [];
  private readonly eventListeners: Array<(key: StreamName, event: string) => void> = [];
  private readonly liveListeners: Array<(key: StreamName, message: LiveMessage | null) => void> = [];
  private readonly readyListeners: Array<() => void> = [];
  private readonly closeListeners: Array<() => void> = [];
  /** Every read sent, grouped (one XREAD naming all keys) or as a command per key. */
  readonly readsSent: Array<ReadonlyArray<readonly [StreamName, StreamId]>> = [];
  readonly readKinds: Array<'grouped' | 'perKey'> = [];
  private readonly wrongType = new Set<StreamName>();
  /** Keys on a node that is down or frozen: their reads reach no answer (as a cluster's are per node). */
  readonly unreachable = new Set<StreamName>();
  readonly subscribeBatches: number[] = [];
  /** Confirm SUBSCRIBEs at once, or hold them until `confirm()`. */
  autoConfirm = true;
  subscriberReady = true;
  readonly connectionCount = 2;
  readReady = true;

  constructor(private readonly count = 1_000) {}

  // --- what the test controls and sees

  /** XADD; `notify: false` is a notification the server never sent (or that was lost). */
  xadd(stream: StreamName, id: StreamId, options: { notify?: boolean } = {}): void {
    const entries = this.streams.get(stream) ?? [];
    entries.push({ id, fields: ['data', '{}'] });
    this.streams.set(stream, entries);
    if (options.notify !== false) this.publish(stream, 'xadd');
  }

  /**
   * Our writers' script: XADD, then its `xadd` event and the live message with the id of the
   * last entry before it (`publish: false`: a message lost; `prev` overrides what it says).
   */
  scriptWrite(stream: StreamName, id: StreamId, options: { publish?: boolean; prev?: StreamId } = {}): void {
    const entries = this.streams.get(stream) ?? [];
    const prev = options.prev ?? entries[entries.length - 1]?.id ?? '0-0';
    this.xadd(stream, id);
    if (options.publish === false || !this.channels.has(stream)) return;
    const message: LiveMessage = { prev, entry: { id, fields: ['data', '{}'] } };
    for (const listener of this.liveListeners) listener(stream, message);
  }

  /** DEL: the key and its entries are gone, and its `del` event goes out. */
  del(stream: StreamName): void {
    this.streams.delete(stream);
    this.publish(stream, 'del');
  }

  /** A message on the key's live channel that does not parse. */
  /** A message on the key's live channel with no write behind it (a producer's bug, or a forgery). */
  publishOnly(stream: StreamName, id: StreamId, prev: StreamId): void {
    if (!this.channels.has(stream)) return;
    const message: LiveMessage = { prev, entry: { id, fields: ['data', '{"forged":true}'] } };
    for (const listener of this.liveListeners) listener(stream, message);
  }

  garbledLive(stream: StreamName): void {
    if (!this.channels.has(stream)) return;
    for (const listener of this.liveListeners) listener(stream, null);
  }

  /** The key now holds another type: a read of it answers WRONGTYPE, and a grouped read fails whole. */
  setWrongType(stream: StreamName): void {
    this.wrongType.add(stream);
  }

  publish(stream: StreamName, event: string): void {
    if (!this.channels.has(stream)) return;
    for (const listener of this.eventListeners) listener(stream, event);
  }

  get channelCount(): number {
    return this.channels.size;
  }

  hasChannel(stream: StreamName): boolean {
    return this.channels.has(stream);
  }

  get unconfirmed(): number {
    return this.pendingCommands.length;
  }

  /** Releases the oldest held SUBSCRIBE or UNSUBSCRIBE. */
  confirm(): void {
    const next = this.pendingCommands.shift();
    if (next === undefined) throw new Error('no command awaiting confirmation');
    this.apply(next);
  }

  dropSubscriber(): void {
    this.subscriberReady = false;
    this.channels.clear();
    this.pendingCommands.length = 0;
    for (const listener of this.closeListeners) listener();
  }

  reconnectSubscriber(): void {
    this.subscriberReady = true;
    for (const listener of this.readyListeners) listener();
  }

  // --- NotifyRedis

  read(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    this.readsSent.push(reads);
    this.readKinds.push('perKey');
    return Promise.resolve(reads.map(([key, after]) => this.readKey(key, after)));
  }

  readGrouped(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    this.readsSent.push(reads);
    this.readKinds.push('grouped');
    const failed = reads.find(([key]) => this.wrongType.has(key));
    if (failed !== undefined && !this.unreachable.has(failed[0])) {
      const error = wrongTypeError();
      return Promise.resolve(reads.map(() => ({ ok: false, error })));
    }
    return Promise.resolve(reads.map(([key, after]) => this.readKey(key, after)));
  }

  private readKey(key: StreamName, after: StreamId): KeyRead {
    if (this.unreachable.has(key)) return { ok: false, error: new Error(`node of ${key} did not answer`) };
    if (this.wrongType.has(key)) return { ok: false, error: wrongTypeError() };
    return { ok: true, entries: (this.streams.get(key) ?? []).filter((e) => compareStreamIds(e.id, after) > 0).slice(0, this.count) };
  }

  subscribe(keys: readonly StreamName[]): Promise<void> {
    this.subscribeBatches.push(keys.length);
    return this.command('subscribe', keys);
  }

  unsubscribe(keys: readonly StreamName[]): Promise<void> {
    return this.command('unsubscribe', keys);
  }

  onEvent(listener: (key: StreamName, event: string) => void): void {
    this.eventListeners.push(listener);
  }

  onLive(listener: (key: StreamName, message: LiveMessage | null) => void): void {
    this.liveListeners.push(listener);
  }

  onSubscriberReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  onSubscriberClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  onReadClose(): void {
    // The fake's read connection never drops.
  }

  disconnect(): void {
    this.subscriberReady = false;
    this.readReady = false;
  }

  private command(kind: Pending['kind'], keys: readonly StreamName[]): Promise<void> {
    return new Promise((resolve) => {
      const pending = { kind, keys, resolve };
      if (this.autoConfirm) this.apply(pending);
      else this.pendingCommands.push(pending);
    });
  }

  private apply(pending: Pending): void {
    for (const key of pending.keys) {
      if (pending.kind === 'subscribe') this.channels.add(key);
      else this.channels.delete(key);
    }
    pending.resolve();
  }
}

/** As ioredis hands on a server's error reply. */
function wrongTypeError(): Error {
  const error = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
  error.name = 'ReplyError';
  return error;
}
