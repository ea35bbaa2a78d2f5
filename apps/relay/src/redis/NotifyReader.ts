import { backoffDelay, compareStreamIds, STREAM_START } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { hasLiveChannel } from '@streamgate/redis';
import type { StreamEntry } from '../core/StreamSource.js';
import type { LiveReader } from './LiveReader.js';
import type { KeyspaceChannels, KeyspaceChannelsFactory } from './KeyspaceChannels.js';
import { keyspaceEventKind } from './keyspaceEventKind.js';
import type { NotifyReads, NotifyRedis } from './NotifyRedis.js';
import { LiveMessageError } from './parseLiveMessage.js';
import type { LiveMessage } from './parseLiveMessage.js';
import { isWrongType, toError } from './redisFailure.js';
import { UnansweredWrites } from './UnansweredWrites.js';
import { RetryLater } from './RetryLater.js';
import { SubscriptionSync } from './SubscriptionSync.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import { SweepSchedule } from './SweepSchedule.js';

/** One instance: its one pub/sub connection holds the channels. A Redis Cluster: `channels` builds what holds them (a connection per primary). */
type NotifyReaderRedis =
  | { readonly redis: NotifyRedis; readonly channels?: undefined }
  | { readonly redis: NotifyReads; readonly channels: KeyspaceChannelsFactory };

export type NotifyReaderOptions = NotifyReaderRedis & {
  readonly clock: Clock;
  /** COUNT of each read; a key that fills a page is read again at once. */
  readonly count: number;
  /**
   * Every watched key is read from its cursor this often, whatever the notifications said: the
   * backstop for a notification lost in a way nothing else shows (see the class comment).
   */
  readonly sweepIntervalMs: number;
  /**
   * A Redis Cluster: some primary does not notify now (ReadModeProbe). Meanwhile the sweep is
   * faster (SweepSchedule).
   */
  readonly unnotified?: () => boolean;
  readonly onEntries: (stream: StreamName, entries: readonly StreamEntry[]) => void;
  /** These keys hold another type; returns the ones dropped (their subscribers were told). */
  readonly onWrongType: (keys: readonly StreamName[]) => Promise<readonly StreamName[]>;
  /** The key may hold a new incarnation (deleted, renamed, or woken with nothing to read): look now. */
  readonly onSuspect: (stream: StreamName) => void;
  /**
   * A look found the key missing after it existed. Its next entries are a new incarnation's, and
   * the look a write to it asks for (onSuspect) starts it over from its first entry: the reader
   * does not read them from the old cursor meanwhile, or entries with ids above it would be
   * delivered before their `stream_reset`, and again after it. Default: never.
   */
  readonly vanished?: (stream: StreamName) => boolean;
  readonly onError: (error: Error) => void;
  readonly onRead: () => void;
  /** Keys per pipelined read. Default 1 000. */
  readonly groupSize?: number;
  readonly subscribeBatchSize?: number;
  readonly maxSubscribesInFlight?: number;
};

/** Wake-ups within this window are read together. */
const COALESCE_MS = 1;

/**
 * Live reads woken by keyspace notifications: Redis is asked only about keys that changed, so
 * its cost per entry does not grow with the number of keys watched (a blocking XREAD naming
 * 10,000 keys costs Redis for every one of them on every read). An entry a writer published on
 * the key's live channel (docs/protocol.md §11) costs no read at all: its `xadd` event is paired
 * with the message that follows it on the same connection, and a message whose previous id is
 * the key's cursor is delivered as it is; any other (a gap: a lost message, a foreign write in
 * between, a reconnect) and an `xadd` no message answered read the key from its cursor. A
 * notification or message is only a hint:
 * positions are the stream ids, and every key is read once its SUBSCRIBE is confirmed (so an
 * entry written before the channel existed is not missed). Pub/sub loses a notification only
 * with its connection (a drop, or Redis closing a subscriber past its output buffer limit), on
 * a slot that moved, or while the server does not notify, and each of those reads the keys: a
 * reconnect subscribes every key again and reads it once confirmed; a connection silently dead
 * fails its heartbeat PING and reconnects (SubscriberHeartbeat); a moved slot's keys are read
 * once confirmed on their new primary (ClusterChannels); a server that stopped notifying is read
 * in batches (ReadModeSwitch), a cluster primary that did is swept every UNNOTIFIED_SWEEP_MS. A
 * live message whose previous id is not the cursor reads the gap. What none of these can see
 * (the setting turned off and on again between two looks) is bounded by the slow sweep,
 * `sweepIntervalMs`.
 */
export class NotifyReader implements LiveReader {
  private readonly cursors = new Map<StreamName, StreamId>();
  /** `xadd` events a live message has not answered yet: what is left was a foreign write, and is read. */
  private readonly awaiting: UnansweredWrites;
  /** The keys marked dirty next have waited out the coalescing window already: read them at once. */
  private coalesced = false;
  /** Keys to read in the next round. */
  private readonly dirty = new Set<StreamName>();
  /** Of those, the ones an `xadd` woke: one that reads nothing may have been recreated below its cursor. */
  private readonly woken = new Set<StreamName>();
  /** Keys the sweep is still to read; read in groups by one XREAD each, after the dirty ones. */
  private readonly swept = new Set<StreamName>();
  /** Keys whose grouped read Redis answered WRONGTYPE (one of them holds another type): read one command each, first. */
  private readonly isolated = new Set<StreamName>();
  /** Keys whose read reached no answer (node down, frozen, past its deadline): read again after a backoff. */
  private readonly retry: RetryLater;
  private readonly sync: KeyspaceChannels;
  private running = true;
  private idleWake: (() => void) | null = null;
  private readonly sweeps: SweepSchedule;
  private abortRead: ((error: Error) => void) | null = null;
  private failures = 0;

  constructor(
    private readonly options: NotifyReaderOptions,
    positions: Iterable<readonly [StreamName, StreamId]> = [],
  ) {
    this.sync = this.channels(options);
    this.retry = new RetryLater(options.clock, (key, woken) => {
      if (this.cursors.has(key)) this.markDirty(key, woken);
    });
    this.awaiting = new UnansweredWrites(options.clock, COALESCE_MS, (keys) => {
      this.coalesced = true;
      for (const key of keys) this.markDirty(key, true);
    });
    options.redis.onEvent((key, event) => this.event(key, event));
    options.redis.onLive((key, message) => this.live(key, message));
    options.redis.onReadClose(() => this.abortRead?.(new Error('read connection closed during XREAD')));
    for (const [stream, after] of positions) this.watch(stream, after);
    this.sweeps = new SweepSchedule({
      clock: options.clock,
      intervalMs: options.sweepIntervalMs,
      ...(options.unnotified === undefined ? {} : { unnotified: options.unnotified }),
      onDue: () => {
        for (const key of this.cursors.keys()) this.swept.add(key);
        this.idleWake?.();
      },
    });
    void this.loop();
  }

  get ready(): boolean {
    return this.options.redis.readReady && this.sync.ready;
  }

  get connectionCount(): number {
    return this.options.redis.connectionCount;
  }

  /** Keyspace channels Redis has confirmed for this reader. */
  get channelCount(): number {
    return this.sync.channelCount;
  }

  private channels(options: NotifyReaderOptions): KeyspaceChannels {
    const hooks = {
      wanted: (key: StreamName) => this.cursors.has(key),
      watched: () => this.cursors.keys(),
      onConfirmed: (keys: readonly StreamName[]) => keys.forEach((key) => this.markDirty(key, false)),
      onMoved: (key: StreamName) => this.options.onSuspect(key),
      onError: options.onError,
    };
    if (options.channels !== undefined) return options.channels(hooks);
    const sync = new SubscriptionSync({
      redis: options.redis,
      clock: options.clock,
      ...hooks,
      ...(options.subscribeBatchSize === undefined ? {} : { batchSize: options.subscribeBatchSize }),
      ...(options.maxSubscribesInFlight === undefined ? {} : { maxInFlight: options.maxSubscribesInFlight }),
    });
    options.redis.onSubscriberClose(() => sync.connectionLost());
    options.redis.onSubscriberReady(() => sync.connectionReady(this.cursors.keys()));
    return sync;
  }

  watch(stream: StreamName, after: StreamId): void {
    if (this.cursors.has(stream)) return;
    this.cursors.set(stream, after);
    // Still subscribed from before an unwatch: no confirmation will come to start its reading.
    if (this.sync.isSubscribed(stream)) this.markDirty(stream, false);
    this.sync.changed(stream);
  }

  unwatch(stream: StreamName): void {
    if (!this.cursors.delete(stream)) return;
    this.dirty.delete(stream);
    this.swept.delete(stream);
    this.isolated.delete(stream);
    this.retry.delete(stream);
    this.woken.delete(stream);
    this.awaiting.forget(stream);
    this.sync.changed(stream);
  }

  forget(stream: StreamName): void {
    this.unwatch(stream);
  }

  cursor(stream: StreamName): StreamId | undefined {
    return this.cursors.get(stream);
  }

  restart(stream: StreamName): boolean {
    if (!this.cursors.has(stream)) return false;
    this.cursors.set(stream, STREAM_START);
    this.markDirty(stream, false);
    return true;
  }

  positions(): Array<readonly [StreamName, StreamId]> {
    return [...this.cursors];
  }

  async close(): Promise<void> {
    this.running = false;
    this.sync.close();
    this.retry.close();
    this.sweeps.close();
    this.awaiting.close();
    this.idleWake?.();
    this.options.redis.disconnect();
    await Promise.resolve();
  }

  private event(key: StreamName, event: string): void {
    const kind = keyspaceEventKind(event);
    if (!this.cursors.has(key) || kind === 'quiet') return;
    if (kind === 'suspect') this.options.onSuspect(key);
    if (kind === 'written' && this.isVanished(key)) {
      this.options.onSuspect(key);
      return;
    }
    if (kind === 'written' && hasLiveChannel(key)) {
      this.awaiting.written(key);
      return;
    }
    this.markDirty(key, kind === 'written');
  }

  /**
   * A writer's message: delivered when it follows the cursor exactly (its previous id is the
   * cursor, so a read from the cursor would return this entry alone), else the key is read. A
   * message at or below the cursor was read already, or is a new incarnation's first write
   * below it: the key's incarnation is looked at, as for a wake-up that reads nothing; so is one
   * whose previous id is below the cursor (a new incarnation's writes above the old ids).
   */
  private live(key: StreamName, message: LiveMessage | null): void {
    const cursor = this.cursors.get(key);
    if (cursor === undefined) return;
    const paired = this.awaiting.answered(key);
    if (this.isVanished(key)) {
      this.options.onSuspect(key);
      return;
    }
    if (message === null) {
      this.options.onError(new LiveMessageError(`live message on ${key} does not parse: read from the stream instead`));
      this.markDirty(key, true);
      return;
    }
    if (!paired) {
      // No `xadd` came before it: nothing says its entry exists (a PUBLISH with no write, or one
      // whose event a read covers already). Delivered as it stands, a forged id would become the
      // cursor, then look like a lost entry and reset the stream. The stream says what is there.
      this.markDirty(key, false);
      return;
    }
    if (message.prev === cursor) {
      // One entry, above the cursor (parseLiveMessage checked its prev is below its id): the
      // cursor moves to it with no comparison, and a read goes on only as deliver would.
      this.cursors.set(key, message.entry.id);
      if (this.options.count <= 1) this.markDirty(key, false);
      this.hand(key, [message.entry]);
      return;
    }
    if (compareStreamIds(message.entry.id, cursor) <= 0) {
      this.options.onSuspect(key);
      return;
    }
    // The stream's last entry before this one is below what was read from it: the key was
    // recreated (a first write says 0-0) or lost entries, unless that entry was XDELed. A look tells.
    if (compareStreamIds(message.prev, cursor) < 0) this.options.onSuspect(key);
    this.markDirty(key, true);
  }

  private isVanished(key: StreamName): boolean {
    return this.options.vanished?.(key) === true;
  }

  private markDirty(key: StreamName, woken: boolean): void {
    // The read goes out after every event heard so far, so it covers their entries: none of them
    // is waiting for its message any longer.
    this.awaiting.forget(key);
    this.dirty.add(key);
    if (woken) this.woken.add(key);
    this.idleWake?.();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.dirty.size === 0 && this.swept.size === 0 && this.isolated.size === 0) {
        await new Promise<void>((resolve) => (this.idleWake = resolve));
        this.idleWake = null;
        continue;
      }
      if (!this.coalesced) await sleepOn(this.options.clock, COALESCE_MS);
      this.coalesced = false;
      if (!this.running) return;
      if (!this.options.redis.readReady) {
        // Keys stay dirty; the reconnect is ioredis's.
        this.failures++;
        await sleepOn(this.options.clock, backoffDelay(this.failures, 50, 1_000));
        continue;
      }
      await this.readRound();
    }
  }

  /**
   * One read of up to `groupSize` keys, each from its cursor, as one grouped XREAD: the dirty
   * keys, else the sweep's. A command per key costs Redis a dispatch per entry when each woken key
   * has one entry (many quiet streams); grouped, that cost is shared. A grouped read fails whole
   * when one key holds another type: its keys are then read one command each, which finds the culprit.
   * A key whose read reached no answer (its node is down or missed the deadline) is not isolated:
   * it waits in `retry`, and the other nodes' keys are delivered and read on as before.
   */
  private async readRound(): Promise<void> {
    const reads: Array<readonly [StreamName, StreamId]> = [];
    const woken = new Set<StreamName>();
    const isolating = this.isolated.size > 0;
    const source = isolating ? this.isolated : this.dirty.size > 0 ? this.dirty : this.swept;
    for (const key of source) {
      if (reads.length >= (this.options.groupSize ?? 1_000)) break;
      this.isolated.delete(key);
      this.dirty.delete(key);
      this.swept.delete(key);
      if (this.woken.delete(key)) woken.add(key);
      const cursor = this.cursors.get(key);
      // A key seen missing is read once a look has found it back, from its new start.
      if (cursor !== undefined && !this.isVanished(key)) reads.push([key, cursor]);
    }
    if (reads.length === 0) return;
    let results;
    try {
      const lost = new Promise<never>((_, reject) => (this.abortRead = reject));
      const read = isolating ? this.options.redis.read(reads) : this.options.redis.readGrouped(reads);
      results = await Promise.race([read, lost]);
    } catch (thrown) {
      if (!this.running) return;
      for (const [key] of reads) this.markDirty(key, woken.has(key));
      this.options.onError(toError(thrown));
      this.failures++;
      await sleepOn(this.options.clock, backoffDelay(this.failures, 50, 5_000));
      return;
    } finally {
      this.abortRead = null;
    }
    // Closed while the read was out (a mode switch): the next reader starts from the positions taken then.
    if (!this.running) return;
    this.options.onRead();
    this.failures = 0;
    const wrongType: StreamName[] = [];
    const unanswered: Array<readonly [StreamName, boolean]> = [];
    const errors = new Set<Error>();
    reads.forEach(([key, sent], i) => {
      const result = results[i];
      // Unwatched, restarted, or moved on by a live message while the read was out: what came
      // back is from a stale position. A key still watched is read again from where it is now.
      if (result === undefined || this.cursors.get(key) !== sent) {
        if (result !== undefined && this.cursors.has(key)) this.markDirty(key, false);
        return;
      }
      if (!result.ok) {
        if (!isWrongType(result.error)) unanswered.push([key, woken.has(key)]);
        else if (!isolating) this.isolate(key, woken.has(key));
        else wrongType.push(key);
        // Once per failed slot group or node, not per key. Per-key WRONGTYPE is onWrongType's.
        if (!isolating || !isWrongType(result.error)) errors.add(result.error);
        return;
      }
      this.deliver(key, sent, result.entries, woken.has(key));
    });
    for (const error of errors) this.options.onError(error);
    if (unanswered.length > 0) this.retry.add(unanswered);
    else this.retry.answered();
    if (wrongType.length > 0) {
      const dropped = await this.options.onWrongType(wrongType);
      for (const key of dropped) this.unwatch(key);
    }
  }

  private isolate(key: StreamName, woken: boolean): void {
    this.isolated.add(key);
    if (woken) this.woken.add(key);
    this.idleWake?.();
  }

  private deliver(key: StreamName, sent: StreamId, entries: readonly StreamEntry[], woken: boolean): void {
    const last = entries[entries.length - 1];
    if (last === undefined) {
      // Told of an XADD, yet nothing after the cursor: the key may have been recreated with lower ids.
      if (woken) this.options.onSuspect(key);
      return;
    }
    if (compareStreamIds(last.id, sent) > 0) this.cursors.set(key, last.id);
    if (entries.length >= this.options.count) this.markDirty(key, false);
    this.hand(key, entries);
  }

  private hand(key: StreamName, entries: readonly StreamEntry[]): void {
    try {
      this.options.onEntries(key, entries);
    } catch (thrown) {
      // The cursor has moved on: a throwing listener must be loud, never a silent gap.
      this.options.onError(toError(thrown));
    }
  }
}
