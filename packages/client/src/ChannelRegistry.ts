import { compareStreamIds } from '@streamgate/protocol';
import type { ClientFrame, RelayError, RelaySubscription, StreamName, SubscribeFrame } from '@streamgate/protocol';
import { fullJitterDelay } from './backoff.js';
import type { ResolvedBackoff } from './backoff.js';
import { StreamChannel } from './StreamChannel.js';
import type { RefreshContext } from './StreamToken.js';
import type { Subscriber } from './Subscription.js';
import type { SubscriptionError } from './types.js';

export interface FrameSink {
  readonly isOpen: boolean;
  send(frame: ClientFrame): boolean;
}

/**
 * The relay subscriptions of the client, one per stream, and their lifecycle on the current
 * socket: subscribe (renewing a token near expiry first), refresh in place, retry with backoff,
 * drop, unsubscribe.
 */
export class ChannelRegistry {
  readonly #channels = new Map<StreamName, StreamChannel>();
  readonly #bySid = new Map<string, StreamChannel>();
  readonly #conn: FrameSink;
  readonly #backoff: ResolvedBackoff;
  readonly #onReleased: (sub: Subscriber) => void;
  #nextSid = 0;

  constructor(conn: FrameSink, backoff: ResolvedBackoff, onReleased: (sub: Subscriber) => void) {
    this.#conn = conn;
    this.#backoff = backoff;
    this.#onReleased = onReleased;
  }

  get(stream: StreamName): StreamChannel | undefined {
    return this.#channels.get(stream);
  }

  /** The channel whose relay subscription in force has this sid; stale sids find nothing. */
  current(sid: string): StreamChannel | undefined {
    const channel = this.#bySid.get(sid);
    return channel !== undefined && channel.sid === sid ? channel : undefined;
  }

  /** Adds a subscriber whose token names `token.stream`, creating or sharing the channel. */
  attach(sub: Subscriber, token: RelaySubscription<unknown>): void {
    const existing = this.#channels.get(token.stream);
    if (existing !== undefined) {
      this.#join(existing, sub, token);
      return;
    }
    const channel = new StreamChannel(token);
    this.#channels.set(channel.stream, channel);
    channel.add(sub);
    this.subscribe(channel, false);
  }

  subscribeAll(): void {
    for (const channel of this.#channels.values()) this.subscribe(channel, false);
  }

  disconnected(): void {
    this.#bySid.clear();
    for (const channel of this.#channels.values()) channel.disconnected();
  }

  /**
   * An `error` frame for `sid`: a refused refresh while one is in flight, else the end of the
   * relay subscription. False when no relay subscription in force has that sid.
   */
  failed(sid: string, error: RelayError): boolean {
    const channel = this.current(sid);
    if (channel === undefined) return false;
    if (channel.token.refreshing) channel.token.refused(sid, error, this.#refreshContext(channel));
    else this.ended(channel, error);
    return true;
  }

  /** The relay ended `channel`'s subscription: retry it with backoff, or close its subscribers. */
  ended(channel: StreamChannel, error: RelayError): void {
    const sid = channel.unbind();
    if (sid !== undefined) this.#bySid.delete(sid);
    if (!error.retryable) {
      this.drop(channel, error);
      return;
    }
    channel.report(error);
    channel.setPhase('idle');
    this.#scheduleRetry(channel);
  }

  /** The relay asked (`refresh_token`) for a new token for `sid`. */
  refreshRequested(sid: string): void {
    const channel = this.current(sid);
    if (channel !== undefined) void channel.token.refreshInPlace(sid, this.#refreshContext(channel));
  }

  clear(): void {
    for (const channel of this.#channels.values()) channel.cancelRetry();
    this.#channels.clear();
    this.#bySid.clear();
  }

  /** A second app subscription to a stream shares the relay subscription already there. */
  #join(channel: StreamChannel, sub: Subscriber, token: RelaySubscription<unknown>): void {
    channel.token.offer(token);
    const earliest = channel.resumeFrom();
    channel.add(sub);
    if (sub.from === undefined) {
      const latest = channel.latestPosition();
      if (latest !== undefined) sub.setPosition(latest);
      sub.setState(channel.subscriberState());
      return;
    }
    const needsEarlier = earliest === undefined || compareStreamIds(sub.from, earliest) < 0;
    if (channel.sid !== undefined && needsEarlier) {
      // The relay is already past what this subscriber asked for: start the relay subscription
      // over from the earlier id; the others drop the replayed entries as duplicates.
      const sid = channel.unbind();
      if (sid !== undefined) {
        this.#bySid.delete(sid);
        this.#conn.send({ op: 'unsubscribe', sid });
      }
      channel.setPhase('idle');
      this.subscribe(channel, false);
      return;
    }
    sub.setState(channel.subscriberState());
  }

  subscribe(channel: StreamChannel, tokenIsFresh: boolean): void {
    if (!this.#conn.isOpen || !channel.canSubscribe) return;
    // A token renewed just now is used even if it is short-lived, or a backend minting short
    // tokens would loop here.
    if (!tokenIsFresh && channel.token.renewalDue()) {
      void this.#renewThenSubscribe(channel);
      return;
    }
    const sid = `s${++this.#nextSid}`;
    const from = channel.resumeFrom();
    const frame: SubscribeFrame = { op: 'subscribe', sid, token: channel.token.value };
    if (from !== undefined) frame.from = from;
    if (!this.#conn.send(frame)) return;
    this.#bySid.set(sid, channel);
    channel.subscribing(sid);
  }

  async #renewThenSubscribe(channel: StreamChannel): Promise<void> {
    const renewal = channel.token.renew();
    if (renewal === undefined) return;
    channel.setPreparing(true);
    const outcome = await renewal;
    channel.setPreparing(false);
    if (this.#channels.get(channel.stream) !== channel) return;
    if (outcome.ok) {
      this.subscribe(channel, true);
    } else if (outcome.error.retryable) {
      channel.report(outcome.error);
      this.#scheduleRetry(channel);
    } else {
      this.drop(channel, outcome.error);
    }
  }

  #scheduleRetry(channel: StreamChannel): void {
    channel.retryLater(
      (attempt) => fullJitterDelay(attempt, this.#backoff),
      () => {
        if (this.#channels.get(channel.stream) === channel) this.subscribe(channel, false);
      },
    );
  }

  #refreshContext(channel: StreamChannel): RefreshContext {
    return {
      isCurrent: (sid) => this.current(sid) === channel,
      send: (frame) => this.#conn.send(frame),
      report: (error) => channel.report(error),
      retryDelay: (attempt) => fullJitterDelay(attempt, this.#backoff),
    };
  }

  drop(channel: StreamChannel, error: SubscriptionError): void {
    const sid = channel.unbind();
    if (sid !== undefined) this.#bySid.delete(sid);
    this.#channels.delete(channel.stream);
    channel.closeAll(error, this.#onReleased);
  }

  /** Removes an unsubscribed subscriber; the relay subscription ends with its last subscriber. */
  detach(sub: Subscriber): void {
    const channel = sub.stream === undefined ? undefined : this.#channels.get(sub.stream);
    if (channel === undefined || !channel.remove(sub) || channel.size > 0) return;
    channel.cancelRetry();
    this.#channels.delete(channel.stream);
    const sid = channel.unbind();
    if (sid !== undefined) {
      this.#bySid.delete(sid);
      this.#conn.send({ op: 'unsubscribe', sid });
    }
  }
}
