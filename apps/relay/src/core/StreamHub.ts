import { STREAM_START, relayError, systemClock } from '@streamgate/protocol';
import type { Clock, RelayError, StreamId, StreamName } from '@streamgate/protocol';
import type { Connection, TopicPublisher } from './Connection.js';
import type { HubMetrics } from './HubMetrics.js';
import { HubSubscriber } from './HubSubscriber.js';
import type { StartResult } from './HubSubscriber.js';
import { StreamChannel } from './StreamChannel.js';
import { causeMessage } from './causeMessage.js';
import type { SourceError, SourceListener, StreamEntry, StreamSource } from './StreamSource.js';
import { classifyRecovery } from './classifyRecovery.js';
import type { RecoveryDecision } from './classifyRecovery.js';
import { subscribedFrameText } from './serverFrames.js';

export interface StreamHubOptions {
  /** The source, or what opens it on the hub's listener (so neither is built before the other exists). */
  readonly source: StreamSource | ((listener: SourceListener) => StreamSource);
  readonly publisher: TopicPublisher;
  readonly metrics: HubMetrics;
  /** Makes topics unique across Redis targets on one pod. */
  readonly topicPrefix: string;
  readonly catchUpPageSize: number;
  readonly maxBufferedBytes: number;
  readonly maxPendingCatchUpBytes: number;
  /** Entries with a larger `data` value are sent as `malformed` (oversizeEntry); default MAX_ENTRY_DATA_BYTES. */
  readonly maxEntryBytes?: number;
  /** How long a stream stays watched after its last subscriber left: reconnect churn re-finds it warm. */
  readonly lingerMs: number;
  /** The channels' linger and catch-up pacing timers; default systemClock. */
  readonly clock?: Clock;
}

/**
 * The fan-out core for the streams of one Redis target: it reads each stream once per pod,
 * serializes each entry once, and places every subscriber on the live topic with no gap and no
 * duplicate. It knows no transport and no Redis client: only StreamSource, Connection and
 * TopicPublisher.
 */
export class StreamHub {
  private readonly channels = new Map<StreamName, StreamChannel>();
  /** Set while the target is held unavailable (TargetHealthWatch): every subscribe is refused with it. */
  private unavailable: RelayError | null = null;

  private readonly source: StreamSource;

  constructor(private readonly options: StreamHubOptions) {
    this.source = typeof options.source === 'function' ? options.source(this.listener) : options.source;
  }

  /** The listener to hand to the source. */
  readonly listener: SourceListener = {
    entries: (stream: StreamName, entries: readonly StreamEntry[]): void => {
      this.channels.get(stream)?.publish(entries);
    },
    reset: (stream: StreamName): void => {
      this.channels.get(stream)?.reset();
    },
    failed: (stream: StreamName, error: SourceError): void => {
      const channel = this.channels.get(stream);
      if (channel === undefined) return;
      this.options.metrics.sourceError('stream');
      for (const sub of channel.subscriberList()) this.endSubscriber(sub, relayError('stream_unavailable', error.message));
      channel.stop();
      this.channels.delete(stream);
    },
  };

  get streamCount(): number {
    return this.channels.size;
  }

  /** Subscribers over all streams of this hub (catching up or live). */
  get subscriberCount(): number {
    let n = 0;
    for (const channel of this.channels.values()) n += channel.subscriberCount;
    return n;
  }

  /** Streams with at least one subscriber now (lingering ones excluded): what demand reports. */
  streamsWithSubscribers(): StreamName[] {
    return [...this.channels.values()].filter((c) => c.subscriberCount > 0).map((c) => c.stream);
  }

  get healthy(): boolean {
    return this.source.healthy;
  }

  get unansweredForMs(): number {
    return this.source.unansweredForMs ?? 0;
  }

  /** False from markUnavailable to markAvailable. */
  get available(): boolean {
    return this.unavailable === null;
  }

  /**
   * The target stayed unreachable past the bound: waiting on it would only hold clients on
   * silent subscriptions. Every subscription of it ends now with a retryable
   * `stream_unavailable` (established ones hear `unsubscribed`, ones still starting their
   * `error`), every stream of it stops being read, and subscribes are refused at once until
   * markAvailable. Clients resubscribe with backoff from their last id. Other hubs (other
   * targets) are not touched.
   */
  markUnavailable(message: string): void {
    if (this.unavailable !== null) return;
    const error = relayError('stream_unavailable', message);
    this.unavailable = error;
    for (const channel of [...this.channels.values()]) {
      for (const sub of channel.subscriberList()) {
        if (sub.phase === 'pending') {
          // Its `subscribed` was not sent: it is a subscribe that failed, answered with `error`.
          channel.remove(sub);
          sub.settle({ ok: false, error });
        } else {
          this.endSubscriber(sub, error);
        }
      }
      channel.stop();
      this.channels.delete(channel.stream);
    }
  }

  /** The target answers again: subscribes are served (each stream is read again on demand). */
  markAvailable(): void {
    this.unavailable = null;
  }

  subscribe(
    conn: Connection,
    sid: string,
    stream: StreamName,
    from: StreamId | undefined,
    exp: number,
    onEnded: (error: RelayError, sub: HubSubscriber) => void,
  ): HubSubscriber {
    const sub = new HubSubscriber(conn, sid, stream, from ?? STREAM_START, exp, onEnded);
    if (this.unavailable !== null) {
      // Refused before any read: a subscribe to a target held down is answered at once, never
      // left waiting on a command queued behind the reconnect. A target merely not answering
      // for a moment is still asked (a busy pod's late PING reply must not refuse clients):
      // the read fails by itself, within the command timeout, if Redis is gone.
      sub.markGone();
      sub.settle({ ok: false, error: this.unavailable });
      return sub;
    }
    const channel = this.channelFor(stream);
    channel.add(sub);
    void this.start(channel, sub, from).then(
      (result) => sub.settle(result),
      (cause: unknown) => {
        this.options.metrics.sourceError('start');
        sub.settle(this.abandon(channel, sub, causeMessage(cause)));
      },
    );
    return sub;
  }

  unsubscribe(sub: HubSubscriber): void {
    const channel = this.channels.get(sub.stream);
    if (channel === undefined) return;
    channel.remove(sub);
    this.releaseIfIdle(channel);
  }

  positionOf(sub: HubSubscriber): StreamId {
    return this.channels.get(sub.stream)?.positionOf(sub) ?? sub.position;
  }

  async close(): Promise<void> {
    for (const channel of this.channels.values()) channel.stop();
    this.channels.clear();
    await this.source.close();
  }

  private async start(channel: StreamChannel, sub: HubSubscriber, from: StreamId | undefined): Promise<StartResult> {
    const ready = await channel.ready;
    if (!ready.ok) return this.abandon(channel, sub, ready.error.message);
    if (sub.gone) return { ok: false, error: relayError('unknown_subscription', 'unsubscribed while starting') };

    if (from === undefined) {
      const position = channel.liveCursor();
      this.options.metrics.recovery('fresh');
      sub.decide(position, false);
      this.answer(channel, sub, subscribedFrameText(sub.sid, sub.stream, 'fresh', position, sub.exp));
      return STARTED;
    }

    let decision: RecoveryDecision = { recovery: 'reset', after: STREAM_START };
    // Metadata read while the stream was being recreated may describe either incarnation: read it
    // again. Should that keep happening, start over from the beginning of the current stream,
    // which is right whatever the incarnation.
    for (let read = 0; read < MAX_DECISION_READS; read++) {
      const incarnation = channel.incarnation;
      const inspected = await this.source.inspect(sub.stream, from);
      if (!inspected.ok) {
        this.options.metrics.sourceError('xinfo');
        return this.abandon(channel, sub, inspected.error.message);
      }
      if (sub.gone) return { ok: false, error: relayError('unknown_subscription', 'unsubscribed while starting') };
      if (channel.incarnation === incarnation) {
        decision = classifyRecovery(from, inspected.value.info, inspected.value.probeExists);
        break;
      }
    }
    sub.decide(decision.after, decision.recovery === 'truncated' || decision.recovery === 'reset');
    this.options.metrics.recovery(decision.recovery);
    this.answer(channel, sub, subscribedFrameText(sub.sid, sub.stream, decision.recovery, decision.after, sub.exp));
    return STARTED;
  }

  /**
   * `subscribed`, then the subscriber placed: a subscriber at the cursor gets its `live` at once.
   * Both leave in one socket write (this runs after an await, outside any uWS callback, where
   * each send would be a write of its own): a subscribe storm costs half the syscalls.
   */
  private answer(channel: StreamChannel, sub: HubSubscriber, subscribed: string): void {
    sub.conn.cork(() => {
      sub.conn.send(subscribed);
      channel.place(sub);
    });
  }

  private abandon(channel: StreamChannel, sub: HubSubscriber, message: string): StartResult {
    channel.remove(sub);
    // A channel whose start failed is dropped at once so that the next subscriber retries it.
    if (this.channels.get(channel.stream) === channel && channel.subscriberCount === 0) {
      channel.stop();
      this.channels.delete(channel.stream);
    }
    return { ok: false, error: relayError('stream_unavailable', `stream cannot be read: ${message}`) };
  }

  /** Removes a started subscriber and tells its owner why; the client may subscribe again. */
  private readonly endSubscriber = (sub: HubSubscriber, error: RelayError): void => {
    if (sub.gone) return;
    this.unsubscribe(sub);
    sub.onEnded(error, sub);
  };

  private channelFor(stream: StreamName): StreamChannel {
    let channel = this.channels.get(stream);
    if (channel === undefined) {
      const o = this.options;
      channel = new StreamChannel(stream, {
        source: this.source,
        publisher: o.publisher,
        metrics: o.metrics,
        topic: o.topicPrefix + stream,
        catchUpPageSize: o.catchUpPageSize,
        maxBufferedBytes: o.maxBufferedBytes,
        maxPendingCatchUpBytes: o.maxPendingCatchUpBytes,
        ...(o.maxEntryBytes === undefined ? {} : { maxEntryBytes: o.maxEntryBytes }),
        onEnd: this.endSubscriber,
        clock: o.clock ?? systemClock,
      });
      this.channels.set(stream, channel);
    }
    return channel;
  }

  private releaseIfIdle(channel: StreamChannel): void {
    channel.linger(this.options.lingerMs, () => {
      if (this.channels.get(channel.stream) !== channel) return;
      channel.stop();
      this.channels.delete(channel.stream);
    });
  }
}

/** Every started subscriber's settled result is this one object: each held a copy for its life. */
const STARTED: StartResult = Object.freeze({ ok: true });

/** Metadata reads a resume makes before it gives up on a stream that keeps being recreated. */
const MAX_DECISION_READS = 3;
