import { compareStreamIds } from '@streamgate/protocol';
import type {
  EventFrame,
  LiveFrame,
  MalformedFrame,
  RelaySubscription,
  StreamId,
  StreamName,
  StreamResetFrame,
  SubscribedFrame,
} from '@streamgate/protocol';
import { RetryTimer } from './RetryTimer.js';
import { StreamToken } from './StreamToken.js';
import type { TokenSource } from './StreamToken.js';
import type { Subscriber } from './SubscriptionHandle.js';
import type { SubscriptionError, SubscriptionState } from './types.js';

export type SharedSubscriptionPhase = 'idle' | 'subscribing' | 'catching-up' | 'live';

/**
 * The relay subscription for one stream on the current socket, shared by every app
 * subscription to that stream (the relay allows one per stream per socket). Each subscriber
 * keeps its own position, so the relay subscription resumes from the earliest of them and later ones drop
 * what they already have.
 */
export class SharedSubscription {
  readonly stream: StreamName;
  readonly token: StreamToken;
  readonly #subscribers = new Set<Subscriber>();
  /** The sid of the relay subscription in force; undefined while none is (being) established. */
  #sid: string | undefined;
  #phase: SharedSubscriptionPhase = 'idle';
  /** Set while a fresh token is fetched before a subscribe, so only one subscribe is prepared. */
  #preparing = false;
  readonly #retry = new RetryTimer();
  /** Cancels the deadline of the subscribe in flight; set until `subscribed` or `unbind`. */
  #cancelAnswerDeadline: (() => void) | undefined;
  #answered = false;
  /** The `from` of the subscribe in force: the earliest position when it was sent. */
  #sentFrom: StreamId | undefined;
  /**
   * Subscribers that were ahead of the `from` of a resume answered `truncated`: what the relay
   * trimmed may lie wholly before their own position. The first entry (or `live`) tells: one at
   * or below their position means nothing after it was lost to them.
   */
  readonly #judging = new Set<Subscriber>();

  /** `random` draws each token's renewal moment. */
  constructor(token: RelaySubscription<unknown>, random?: () => number) {
    this.stream = token.stream;
    const source = (): TokenSource | undefined => {
      // Any open subscriber can mint tokens for the stream; the oldest one does.
      const oldest: Subscriber | undefined = this.#subscribers.values().next().value;
      return oldest === undefined ? undefined : () => oldest.getToken();
    };
    this.token = new StreamToken(token, source, random);
  }

  get sid(): string | undefined {
    return this.#sid;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /**
   * No relay subscription is in force or being prepared, and no retry is waiting: a subscribe
   * may be sent now.
   */
  get canSubscribe(): boolean {
    return this.#sid === undefined && !this.#preparing && !this.#retry.pending;
  }

  add(sub: Subscriber): void {
    this.#subscribers.add(sub);
  }

  /** False when `sub` was not a subscriber. */
  remove(sub: Subscriber): boolean {
    this.#judging.delete(sub);
    return this.#subscribers.delete(sub);
  }

  /** A subscribe frame with `sid` went out, resuming after `from` (undefined: fresh). */
  subscribing(sid: string, from?: StreamId): void {
    this.#sid = sid;
    this.#sentFrom = from;
    this.#judging.clear();
    this.#answered = false;
    this.setPhase('subscribing');
  }

  /** The relay answered the subscribe in force with `subscribed`. */
  get answered(): boolean {
    return this.#answered;
  }

  /** Holds the cancel of the deadline of the subscribe just sent. */
  awaitAnswer(cancel: () => void): void {
    this.#clearAnswerDeadline();
    this.#cancelAnswerDeadline = cancel;
  }

  #clearAnswerDeadline(): void {
    this.#cancelAnswerDeadline?.();
    this.#cancelAnswerDeadline = undefined;
  }

  /**
   * The relay subscription in force is over (ended by the relay, or replaced by the client);
   * returns its sid, if there was one.
   */
  unbind(): string | undefined {
    const sid = this.#sid;
    this.#sid = undefined;
    this.#clearAnswerDeadline();
    this.token.abandonRefresh();
    return sid;
  }

  /** A token is being renewed before the next subscribe; `false` once that is settled. */
  setPreparing(preparing: boolean): void {
    this.#preparing = preparing;
  }

  /** Schedules the next subscribe attempt after the backoff `delayFor` gives for this attempt. */
  retryLater(delayFor: (attempt: number) => number, retry: () => void): void {
    this.cancelRetry();
    this.#retry.schedule(delayFor, retry);
  }

  /** The earliest position any subscriber holds: resuming there loses nothing for anyone. */
  resumeFrom(): StreamId | undefined {
    let earliest: StreamId | undefined;
    for (const sub of this.#subscribers) {
      const p = sub.position;
      if (p !== undefined && (earliest === undefined || compareStreamIds(p, earliest) < 0)) earliest = p;
    }
    return earliest;
  }

  latestPosition(): StreamId | undefined {
    let latest: StreamId | undefined;
    for (const sub of this.#subscribers) {
      const p = sub.position;
      if (p !== undefined && (latest === undefined || compareStreamIds(p, latest) > 0)) latest = p;
    }
    return latest;
  }

  subscriberState(): SubscriptionState {
    return this.#phase === 'catching-up' || this.#phase === 'live' ? this.#phase : 'connecting';
  }

  setPhase(phase: SharedSubscriptionPhase): void {
    this.#phase = phase;
    const state = this.subscriberState();
    for (const sub of this.#subscribers) sub.setState(state);
  }

  applySubscribed(frame: SubscribedFrame): void {
    this.#answered = true;
    this.#clearAnswerDeadline();
    this.#retry.resetAttempts();
    this.token.confirmExpiry(frame.exp);
    this.#phase = frame.recovery === 'fresh' ? 'live' : 'catching-up';
    const from = this.#sentFrom;
    for (const sub of this.#subscribers) {
      const previousPosition = sub.position;
      if (previousPosition === undefined) {
        // A subscriber without a position asked for nothing from the past: it starts where the
        // relay is now (here for a fresh answer, at `live` after another one's catch-up).
        if (frame.recovery === 'fresh') sub.setPosition(frame.position);
        sub.setState(this.subscriberState());
        continue;
      }
      // Ahead of the resume point (another subscriber asked for earlier entries): a trim before
      // its own position took nothing from it, which the first entry tells.
      if (frame.recovery === 'truncated' && from !== undefined && compareStreamIds(previousPosition, from) > 0) {
        this.#judging.add(sub);
        sub.setState(this.subscriberState());
        continue;
      }
      // Otherwise the relay's word is final: truncated and reset mean entries were lost to it.
      if (frame.recovery === 'truncated' || frame.recovery === 'reset') {
        sub.recover({ recovery: frame.recovery, previousPosition, position: frame.position, stream: this.stream });
        continue;
      }
      sub.setState(this.subscriberState());
    }
  }

  /** A subscriber ahead of a truncated resume meets its first entry (or the live position) `id`. */
  #judge(sub: Subscriber, id: StreamId): void {
    // Nearly always empty: one size check per delivery, not a set lookup per subscriber.
    if (this.#judging.size === 0 || !this.#judging.delete(sub)) return;
    const position = sub.position;
    if (position === undefined || compareStreamIds(id, position) <= 0) return;
    // The oldest retained entry is beyond its position: entries in between may have been trimmed.
    sub.recover({ recovery: 'truncated', previousPosition: position, position, stream: this.stream });
  }

  applyLive(frame: LiveFrame): void {
    this.#phase = 'live';
    for (const sub of this.#subscribers) {
      this.#judge(sub, frame.position);
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
    for (const sub of this.#subscribers) {
      if (this.#waitsForLive(sub)) continue;
      this.#judge(sub, frame.id);
      sub.deliver(frame.data, meta);
    }
  }

  skipMalformed(frame: MalformedFrame): void {
    const meta = { id: frame.id, stream: frame.stream };
    for (const sub of this.#subscribers) {
      if (this.#waitsForLive(sub)) continue;
      this.#judge(sub, frame.id);
      sub.skipMalformed(meta, frame.reason);
    }
  }

  /** No position yet during another one's catch-up: it starts at `live`, where the stream is now. */
  #waitsForLive(sub: Subscriber): boolean {
    return sub.position === undefined && this.#phase === 'catching-up';
  }

  /** The stream was recreated: every subscriber starts over at `frame.position`. */
  applyReset(frame: StreamResetFrame): void {
    this.#judging.clear();
    for (const sub of this.#subscribers) sub.reset(this.stream, frame.position);
  }

  /** A drain notice names the relay's position; a subscriber keeps its own when it is later. */
  adoptPosition(id: StreamId): void {
    for (const sub of this.#subscribers) {
      if (sub.position === undefined || compareStreamIds(sub.position, id) < 0) sub.setPosition(id);
    }
  }

  /** `halting`: its subscribers are closed next, so they are not told of `connecting` first. */
  disconnected(halting = false): void {
    this.unbind();
    // `preparing` stays: the token fetch in flight finishes and subscribes on the next socket.
    if (halting) this.#phase = 'idle';
    else this.setPhase('idle');
  }

  report(error: SubscriptionError): void {
    for (const sub of this.#subscribers) sub.report(error);
  }

  /**
   * Ends every subscriber (with `error`, if the relay subscription failed); `released` hears of each one
   * before any is told, so the client has forgotten them all by the time their callbacks run.
   */
  closeAll(error: SubscriptionError | undefined, released: (sub: Subscriber) => void = () => undefined): void {
    this.cancelRetry();
    const closed = [...this.#subscribers];
    for (const sub of closed) released(sub);
    for (const sub of closed) sub.fail(error);
    this.#subscribers.clear();
  }

  /** Cancels the pending subscribe retry and refresh retry, if any. */
  cancelRetry(): void {
    this.#clearAnswerDeadline();
    this.#retry.cancel();
    this.token.cancelRefreshRetry();
  }
}
