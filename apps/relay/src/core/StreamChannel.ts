import { STREAM_START, compareStreamIds } from '@streamgate/protocol';
import type { Clock, RelayError, StreamId, StreamName } from '@streamgate/protocol';
import { CatchUpGroup } from './CatchUpGroup.js';
import { causeMessage } from './causeMessage.js';
import type { CatchUpHost } from './CatchUpGroup.js';
import type { TopicPublisher } from './Connection.js';
import type { HubMetrics } from './HubMetrics.js';
import type { HubSubscriber } from './HubSubscriber.js';
import type { SourceResult, StreamEntry, StreamSource } from './StreamSource.js';
import { StreamFrames, liveFrameText } from './serverFrames.js';

export interface ChannelOptions {
  readonly source: StreamSource;
  readonly publisher: TopicPublisher;
  readonly metrics: HubMetrics;
  readonly topic: string;
  readonly catchUpPageSize: number;
  readonly maxBufferedBytes: number;
  readonly maxPendingCatchUpBytes: number;
  /** Entries with a larger `data` value are sent as `malformed` (oversizeEntry); default MAX_ENTRY_DATA_BYTES. */
  readonly maxEntryBytes?: number;
  readonly onEnd: (sub: HubSubscriber, error: RelayError) => void;
  readonly clock: Clock;
}

/**
 * One stream on one pod: its live cursor, its subscribers and its catch-up group. The cursor is
 * the id of the last entry published to the topic; it is set in the same tick as the publish,
 * which is what the catch-up seam relies on.
 */
export class StreamChannel implements CatchUpHost {
  private readonly subscribers = new Set<HubSubscriber>();
  readonly ready: Promise<SourceResult<void>>;
  readonly frames: StreamFrames;
  private cursor: StreamId = STREAM_START;
  private resets = 0;
  private isReady = false;
  private stopped = false;
  private readonly waiting: HubSubscriber[] = [];
  private readonly catchUp: CatchUpGroup;
  private cancelLingerTimer: (() => void) | null = null;

  constructor(
    readonly stream: StreamName,
    private readonly options: ChannelOptions,
  ) {
    this.frames = new StreamFrames(stream, options.maxEntryBytes);
    this.catchUp = new CatchUpGroup(this);
    this.ready = this.start().catch(
      // A source that throws instead of answering must not leave every subscriber of the stream
      // waiting for ever: the failure is typed and counted, and the subscribers drop the channel.
      (cause: unknown): SourceResult<void> => {
        this.options.metrics.sourceError('start');
        return { ok: false, error: { code: 'source_unavailable', retryable: true, message: causeMessage(cause) } };
      },
    );
  }

  get source(): StreamSource {
    return this.options.source;
  }
  get metrics(): HubMetrics {
    return this.options.metrics;
  }
  get pageSize(): number {
    return this.options.catchUpPageSize;
  }
  get maxBufferedBytes(): number {
    return this.options.maxBufferedBytes;
  }
  get maxPendingCatchUpBytes(): number {
    return this.options.maxPendingCatchUpBytes;
  }
  get clock(): Clock {
    return this.options.clock;
  }
  get topic(): string {
    return this.options.topic;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Every subscriber, in a copy: ending them changes the set. */
  subscriberList(): HubSubscriber[] {
    return [...this.subscribers];
  }

  /** A new subscriber; a lingering channel is kept. */
  add(sub: HubSubscriber): void {
    this.subscribers.add(sub);
    this.cancelLinger();
  }

  /** Calls `expire` after `ms` unless a subscriber arrives first or the channel stops. */
  linger(ms: number, expire: () => void): void {
    if (this.subscribers.size > 0 || this.cancelLingerTimer !== null) return;
    this.cancelLingerTimer = this.options.clock.after(ms, () => {
      this.cancelLingerTimer = null;
      if (this.subscribers.size === 0) expire();
    });
  }

  private cancelLinger(): void {
    if (this.cancelLingerTimer === null) return;
    this.cancelLingerTimer();
    this.cancelLingerTimer = null;
  }

  liveCursor(): StreamId {
    return this.cursor;
  }

  /**
   * How many times the stream was recreated under this channel. A decision taken across an await
   * (a resume's inspect, a catch-up page) is only valid if this did not change meanwhile.
   */
  get incarnation(): number {
    return this.resets;
  }

  private async start(): Promise<SourceResult<void>> {
    const inspected = await this.options.source.inspect(this.stream);
    if (!inspected.ok) {
      this.options.metrics.sourceError('xinfo');
      return inspected;
    }
    // Explicit ids, never `$`: a batched XREAD re-issued with `$` would skip what arrived in between.
    this.cursor = inspected.value.info?.lastGeneratedId ?? STREAM_START;
    if (this.stopped) return { ok: true, value: undefined };
    this.isReady = true;
    this.options.source.watch(this.stream, this.cursor);
    return { ok: true, value: undefined };
  }

  /** Places a subscriber whose resume decision says it has everything up to its position. */
  place(sub: HubSubscriber): void {
    const cmp = compareStreamIds(sub.position, this.cursor);
    if (cmp === 0) {
      this.promote(sub);
    } else if (cmp > 0) {
      sub.startWaiting();
      this.waiting.push(sub);
    } else {
      sub.startCatchUp();
      this.catchUp.add(sub);
    }
  }

  promote(sub: HubSubscriber): void {
    if (sub.conn.closed || !sub.markLive()) return;
    sub.conn.subscribe(this.topic);
    sub.conn.send(liveFrameText(sub.sid, sub.position));
  }

  end(sub: HubSubscriber, error: RelayError): void {
    this.options.onEnd(sub, error);
  }

  remove(sub: HubSubscriber): void {
    const wasLive = sub.markGone() === 'live';
    this.subscribers.delete(sub);
    this.catchUp.remove(sub);
    const i = this.waiting.indexOf(sub);
    if (i >= 0) this.waiting.splice(i, 1);
    if (wasLive && !sub.conn.closed) sub.conn.unsubscribe(this.topic);
  }

  /** Where a subscriber stands: live ones have been handed everything up to the cursor. */
  positionOf(sub: HubSubscriber): StreamId {
    return sub.phase === 'live' ? this.cursor : sub.position;
  }

  /** Entries read once by the pod's live reader, published once to the topic. */
  publish(entries: readonly StreamEntry[]): void {
    if (!this.isReady) return;
    const { publisher, metrics, topic } = this.options;
    let delivered = 0;
    // The topic's size only changes here when waiting subscribers join; look it up once otherwise.
    let reach = publisher.subscriberCount(topic);
    for (const entry of entries) {
      if (compareStreamIds(entry.id, this.cursor) <= 0) continue;
      if (this.waiting.length > 0 && this.releaseWaiting(entry.id)) reach = publisher.subscriberCount(topic);
      const frame = this.frames.entry(entry);
      if (frame.malformed) metrics.malformedEntry();
      publisher.publish(topic, frame.text);
      delivered += reach;
      this.cursor = entry.id;
    }
    // A waiting subscriber whose position the cursor has now reached holds everything: it goes
    // live now rather than at the next entry, which may be a long time coming.
    if (this.waiting.length > 0) this.releaseWaiting(this.cursor, true);
    if (delivered > 0) metrics.delivered(delivered, 'live');
  }

  /**
   * The key holds a new incarnation and the source reads it from its start. Live subscribers get
   * the notice on the topic, so it lands right before the new entries; placed subscribers that
   * are not live yet get it directly and join the topic at once: like every live one, they hold
   * nothing of the new incarnation and the cursor is at its start, so the seam is exact.
   */
  reset(): void {
    if (!this.isReady) return;
    this.resets++;
    this.cursor = STREAM_START;
    const notice = this.frames.reset(STREAM_START);
    this.options.publisher.publish(this.topic, notice);
    const placed = [...this.catchUp.takeAll(), ...this.waiting.splice(0)];
    for (const sub of placed) {
      if (sub.conn.closed) continue;
      sub.restartAt(STREAM_START);
      sub.conn.send(notice);
      this.promote(sub);
    }
  }

  /** Subscribers ahead of the cursor join just before the first entry after their position. */
  /** Returns whether any subscriber joined the topic. */
  private releaseWaiting(id: StreamId, inclusive = false): boolean {
    let released = false;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const sub = this.waiting[i] as HubSubscriber;
      const cmp = compareStreamIds(sub.position, id);
      if (cmp < 0 || (inclusive && cmp === 0)) {
        this.waiting.splice(i, 1);
        this.promote(sub);
        released = true;
      }
    }
    return released;
  }

  stop(): void {
    this.cancelLinger();
    if (this.isReady) this.options.source.unwatch(this.stream);
    this.isReady = false;
    this.stopped = true;
  }
}
