import { compareStreamIds } from '@streamgate/protocol';
import type {
  EventFrame,
  LiveFrame,
  MalformedFrame,
  RelaySubscription,
  StreamId,
  StreamName,
  SubscribedFrame,
} from '@streamgate/protocol';
import type { Subscriber } from './Subscription.js';
import type { SubscriptionError, SubscriptionState } from './types.js';

export type ChannelPhase = 'idle' | 'subscribing' | 'catching-up' | 'live';

/**
 * The relay subscription for one stream on the current socket, shared by every app
 * subscription to that stream (the relay allows one per stream per socket). Each subscriber
 * keeps its own position, so the channel resumes from the earliest of them and later ones drop
 * what they already have.
 */
export class StreamChannel {
  readonly stream: StreamName;
  readonly subscribers = new Set<Subscriber>();
  /** The sid of the relay subscription in force; undefined while none is (being) established. */
  sid: string | undefined;
  phase: ChannelPhase = 'idle';
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** Set from a `refresh_token` frame until `refreshed`, an error or a disconnect. */
  refreshInFlight = false;
  /** Set while a fresh token is fetched before a subscribe, so only one subscribe is prepared. */
  preparing = false;
  retryAttempt = 0;
  retryTimer: ReturnType<typeof setTimeout> | undefined;
  refreshAttempt = 0;
  refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(token: RelaySubscription<unknown>) {
    this.stream = token.stream;
    this.token = token.token;
    this.expiresAt = token.expiresAt;
  }

  #tokenFetch: Promise<unknown> | undefined;

  /** Any open subscriber can mint tokens for the stream; the oldest one does. */
  tokenSource(): Subscriber | undefined {
    return this.subscribers.values().next().value;
  }

  /**
   * The `getToken()` call in flight for this stream, started if none is. A refresh asked for on
   * one socket and a resubscribe on the next share it: one backend call per renewal, however the
   * connection churns while it runs. Undefined when no subscriber is left to ask.
   */
  fetchToken(): Promise<unknown> | undefined {
    if (this.#tokenFetch !== undefined) return this.#tokenFetch;
    const source = this.tokenSource();
    if (source === undefined) return undefined;
    const fetch = Promise.resolve().then(() => source.getToken());
    this.#tokenFetch = fetch;
    const settle = (): void => {
      if (this.#tokenFetch === fetch) this.#tokenFetch = undefined;
    };
    fetch.then(settle, settle);
    return fetch;
  }

  /** The earliest position any subscriber holds: resuming there loses nothing for anyone. */
  resumeFrom(): StreamId | undefined {
    let earliest: StreamId | undefined;
    for (const sub of this.subscribers) {
      const p = sub.position;
      if (p !== undefined && (earliest === undefined || compareStreamIds(p, earliest) < 0)) earliest = p;
    }
    return earliest;
  }

  latestPosition(): StreamId | undefined {
    let latest: StreamId | undefined;
    for (const sub of this.subscribers) {
      const p = sub.position;
      if (p !== undefined && (latest === undefined || compareStreamIds(p, latest) > 0)) latest = p;
    }
    return latest;
  }

  subscriberState(): SubscriptionState {
    return this.phase === 'catching-up' || this.phase === 'live' ? this.phase : 'connecting';
  }

  setPhase(phase: ChannelPhase): void {
    this.phase = phase;
    const state = this.subscriberState();
    for (const sub of this.subscribers) sub.setState(state);
  }

  applySubscribed(frame: SubscribedFrame): void {
    this.phase = frame.recovery === 'fresh' ? 'live' : 'catching-up';
    for (const sub of this.subscribers) {
      const previousPosition = sub.position;
      // The relay's word is final: truncated and reset both mean entries were lost to this client.
      if (frame.recovery === 'truncated' || frame.recovery === 'reset') {
        sub.recover({ recovery: frame.recovery, previousPosition, position: frame.position, stream: this.stream });
        continue;
      }
      if (previousPosition === undefined) sub.setPosition(frame.position);
      sub.setState(this.subscriberState());
    }
  }

  applyLive(frame: LiveFrame): void {
    this.phase = 'live';
    for (const sub of this.subscribers) {
      // Everything up to the live position has been sent; a subscriber behind it saw no entries
      // in between (they would have advanced it), so it may move up.
      if (sub.position === undefined || compareStreamIds(sub.position, frame.position) < 0) {
        sub.setPosition(frame.position);
      }
      sub.setState('live');
    }
  }

  deliver(frame: EventFrame): void {
    const meta = { id: frame.id, stream: frame.stream };
    for (const sub of this.subscribers) sub.deliver(frame.data, meta);
  }

  skipMalformed(frame: MalformedFrame): void {
    const meta = { id: frame.id, stream: frame.stream };
    for (const sub of this.subscribers) sub.skipMalformed(meta, frame.reason);
  }

  /** A drain notice names the relay's position; a subscriber keeps its own when it is later. */
  adoptPosition(id: StreamId): void {
    for (const sub of this.subscribers) {
      if (sub.position === undefined || compareStreamIds(sub.position, id) < 0) sub.setPosition(id);
    }
  }

  disconnected(): void {
    this.sid = undefined;
    // `preparing` stays: the token fetch in flight finishes and subscribes on the next socket.
    this.refreshInFlight = false;
    this.setPhase('idle');
  }

  report(error: SubscriptionError): void {
    for (const sub of this.subscribers) sub.report(error);
  }

  closeAll(error: SubscriptionError | undefined): void {
    this.cancelRetry();
    for (const sub of [...this.subscribers]) sub.fail(error);
    this.subscribers.clear();
  }

  cancelRetry(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.refreshTimer !== undefined) clearTimeout(this.refreshTimer);
    this.retryTimer = undefined;
    this.refreshTimer = undefined;
  }
}
