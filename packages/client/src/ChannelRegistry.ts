import { backoffDelay, compareStreamIds } from '@streamgate/protocol';
import type { ClientFrame, RelayError, RelaySubscription, StreamName, SubscribeFrame } from '@streamgate/protocol';
import type { ResolvedBackoff } from './backoff.js';
import { StreamChannel } from './StreamChannel.js';
import type { Subscriber } from './Subscription.js';
import { checkToken, describeError, expiresSoon } from './tokens.js';
import type { SubscriptionError } from './types.js';

export interface FrameSink {
  readonly isOpen: boolean;
  send(frame: ClientFrame): boolean;
}

/**
 * The relay subscriptions of the client, one per stream, and their lifecycle on the current
 * socket: subscribe (renewing a token near expiry first), retry with backoff, drop, unsubscribe.
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
      this.#join(existing, sub, token.token, token.expiresAt);
      return;
    }
    const channel = new StreamChannel(token);
    this.#channels.set(channel.stream, channel);
    channel.subscribers.add(sub);
    this.subscribe(channel, false);
  }

  subscribeAll(): void {
    for (const channel of this.#channels.values()) this.subscribe(channel, false);
  }

  disconnected(): void {
    this.#bySid.clear();
    for (const channel of this.#channels.values()) channel.disconnected();
  }

  /** The relay ended `channel`'s subscription: retry it with backoff, or close its subscribers. */
  ended(channel: StreamChannel, error: RelayError): void {
    if (channel.sid !== undefined) this.#bySid.delete(channel.sid);
    channel.sid = undefined;
    channel.refreshInFlight = false;
    if (!error.retryable) {
      this.drop(channel, error);
      return;
    }
    channel.report(error);
    channel.setPhase('idle');
    this.#scheduleRetry(channel);
  }

  clear(): void {
    for (const channel of this.#channels.values()) channel.cancelRetry();
    this.#channels.clear();
    this.#bySid.clear();
  }

  /** A second app subscription to a stream shares the relay subscription already there. */
  #join(channel: StreamChannel, sub: Subscriber, token: string, expiresAt: number): void {
    if (expiresAt > channel.expiresAt) {
      channel.token = token;
      channel.expiresAt = expiresAt;
    }
    const earliest = channel.resumeFrom();
    channel.subscribers.add(sub);
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
      this.#bySid.delete(channel.sid);
      this.#conn.send({ op: 'unsubscribe', sid: channel.sid });
      channel.sid = undefined;
      channel.setPhase('idle');
      this.subscribe(channel, false);
      return;
    }
    sub.setState(channel.subscriberState());
  }

  subscribe(channel: StreamChannel, tokenIsFresh: boolean): void {
    if (!this.#conn.isOpen) return;
    if (channel.sid !== undefined || channel.preparing || channel.retryTimer !== undefined) return;
    // A token renewed just now is used even if it is short-lived, or a backend minting short
    // tokens would loop here.
    if (!tokenIsFresh && expiresSoon(channel.expiresAt)) {
      channel.preparing = true;
      void this.#renewThenSubscribe(channel);
      return;
    }
    const sid = `s${++this.#nextSid}`;
    const from = channel.resumeFrom();
    const frame: SubscribeFrame = { op: 'subscribe', sid, token: channel.token };
    if (from !== undefined) frame.from = from;
    if (!this.#conn.send(frame)) return;
    channel.sid = sid;
    this.#bySid.set(sid, channel);
    channel.setPhase('subscribing');
  }

  async #renewThenSubscribe(channel: StreamChannel): Promise<void> {
    const fetch = channel.fetchToken();
    let value: unknown;
    try {
      if (fetch === undefined) return;
      value = await fetch;
    } catch (error) {
      if (this.#channels.get(channel.stream) !== channel) return;
      channel.report({ code: 'token_fetch_failed', retryable: true, message: describeError(error) });
      this.#scheduleRetry(channel);
      return;
    } finally {
      channel.preparing = false;
    }
    if (this.#channels.get(channel.stream) !== channel) return;
    const checked = checkToken(value, channel.stream);
    if (!checked.ok) {
      this.drop(channel, checked.error);
      return;
    }
    channel.token = checked.token.token;
    channel.expiresAt = checked.token.expiresAt;
    this.subscribe(channel, true);
  }

  #scheduleRetry(channel: StreamChannel): void {
    channel.cancelRetry();
    const delay = backoffDelay(channel.retryAttempt++, this.#backoff.baseMs, this.#backoff.maxMs);
    channel.retryTimer = setTimeout(() => {
      channel.retryTimer = undefined;
      if (this.#channels.get(channel.stream) === channel) this.subscribe(channel, false);
    }, delay);
  }

  drop(channel: StreamChannel, error: SubscriptionError): void {
    if (channel.sid !== undefined) this.#bySid.delete(channel.sid);
    this.#channels.delete(channel.stream);
    for (const sub of channel.subscribers) this.#onReleased(sub);
    channel.closeAll(error);
  }

  /** Removes an unsubscribed subscriber; the relay subscription ends with its last subscriber. */
  detach(sub: Subscriber): void {
    const channel = sub.stream === undefined ? undefined : this.#channels.get(sub.stream);
    if (channel === undefined || !channel.subscribers.delete(sub) || channel.subscribers.size > 0) return;
    channel.cancelRetry();
    this.#channels.delete(channel.stream);
    if (channel.sid !== undefined) {
      this.#bySid.delete(channel.sid);
      this.#conn.send({ op: 'unsubscribe', sid: channel.sid });
    }
  }
}
