import { backoffDelay, compareStreamIds } from '@streamgate/protocol';
import type { ClientFrame, RelayError, RelaySubscription, StreamName, SubscribeFrame } from '@streamgate/protocol';
import type { ResolvedBackoff } from './backoff.js';
import type { RequestDeadline } from './RequestDeadline.js';
import { SharedSubscription } from './SharedSubscription.js';
import type { RefreshContext } from './StreamToken.js';
import type { Subscriber } from './SubscriptionHandle.js';
import type { SubscriptionError } from './types.js';

export interface FrameSender {
  readonly isOpen: boolean;
  send(frame: ClientFrame): boolean;
}

/**
 * The relay subscriptions of the client, one per stream, and their lifecycle on the current
 * socket: subscribe (renewing a token near expiry first), refresh in place, retry with backoff,
 * drop, unsubscribe.
 */
export class SharedSubscriptionRegistry {
  readonly #byStream = new Map<StreamName, SharedSubscription>();
  readonly #bySid = new Map<string, SharedSubscription>();
  readonly #conn: FrameSender;
  readonly #backoff: ResolvedBackoff;
  readonly #onReleased: (sub: Subscriber) => void;
  readonly #random: (() => number) | undefined;
  readonly #deadline: RequestDeadline | undefined;
  #nextSid = 0;

  constructor(
    conn: FrameSender,
    backoff: ResolvedBackoff,
    onReleased: (sub: Subscriber) => void,
    random?: () => number,
    deadline?: RequestDeadline,
  ) {
    this.#deadline = deadline;
    this.#conn = conn;
    this.#backoff = backoff;
    this.#onReleased = onReleased;
    this.#random = random;
  }

  get(stream: StreamName): SharedSubscription | undefined {
    return this.#byStream.get(stream);
  }

  /** The shared subscription whose relay subscription in force has this sid; stale sids find nothing. */
  current(sid: string): SharedSubscription | undefined {
    const shared = this.#bySid.get(sid);
    return shared !== undefined && shared.sid === sid ? shared : undefined;
  }

  /** Adds a subscriber whose token names `token.stream`, creating or joining its shared subscription. */
  attach(sub: Subscriber, token: RelaySubscription<unknown>): void {
    const existing = this.#byStream.get(token.stream);
    if (existing !== undefined) {
      this.#join(existing, sub, token);
      return;
    }
    const shared = new SharedSubscription(token, this.#random);
    this.#byStream.set(shared.stream, shared);
    shared.add(sub);
    this.subscribe(shared, false);
  }

  subscribeAll(): void {
    for (const shared of this.#byStream.values()) this.subscribe(shared, false);
  }

  /** The socket is gone; `halting`: every subscription is about to be closed (no state change first). */
  disconnected(halting = false): void {
    this.#bySid.clear();
    for (const shared of this.#byStream.values()) shared.disconnected(halting);
  }

  /**
   * An `error` frame for `sid`: a refused refresh while one is in flight, else the end of the
   * relay subscription. False when no relay subscription in force has that sid.
   */
  failed(sid: string, error: RelayError): boolean {
    const shared = this.current(sid);
    if (shared === undefined) return false;
    if (shared.token.refreshing) shared.token.refused(sid, error, this.#refreshContext(shared));
    else this.ended(shared, error);
    return true;
  }

  /** The relay ended the relay subscription of `shared`: retry it with backoff, or close its subscribers. */
  ended(shared: SharedSubscription, error: RelayError): void {
    const sid = shared.unbind();
    if (sid !== undefined) this.#bySid.delete(sid);
    if (!error.retryable) {
      this.drop(shared, error);
      return;
    }
    shared.report(error);
    shared.setPhase('idle');
    this.#scheduleRetry(shared);
  }

  /** The relay asked (`refresh_token`) for a new token for `sid`. */
  refreshRequested(sid: string): void {
    const shared = this.current(sid);
    if (shared !== undefined) void shared.token.refreshInPlace(sid, this.#refreshContext(shared));
  }

  clear(): void {
    for (const shared of this.#byStream.values()) shared.cancelRetry();
    this.#byStream.clear();
    this.#bySid.clear();
  }

  /** A second app subscription to a stream shares the relay subscription already there. */
  #join(shared: SharedSubscription, sub: Subscriber, token: RelaySubscription<unknown>): void {
    shared.token.offer(token);
    const earliest = shared.resumeFrom();
    shared.add(sub);
    if (sub.from === undefined) {
      // Asks for nothing from the past: while live, the relay is at the latest position; before
      // that (another one's catch-up), it starts at `live` (SharedSubscription).
      const latest = shared.subscriberState() === 'live' ? shared.latestPosition() : undefined;
      if (latest !== undefined) sub.setPosition(latest);
      sub.setState(shared.subscriberState());
      return;
    }
    const needsEarlier = earliest === undefined || compareStreamIds(sub.from, earliest) < 0;
    if (shared.sid !== undefined && needsEarlier) {
      // The relay is already past what this subscriber asked for: start the relay subscription
      // over from the earlier id; the others drop the replayed entries as duplicates.
      const sid = shared.unbind();
      if (sid !== undefined) {
        this.#bySid.delete(sid);
        this.#conn.send({ op: 'unsubscribe', sid });
      }
      shared.setPhase('idle');
      this.subscribe(shared, false);
      return;
    }
    sub.setState(shared.subscriberState());
  }

  subscribe(shared: SharedSubscription, tokenIsFresh: boolean): void {
    if (!this.#conn.isOpen || !shared.canSubscribe) return;
    // A token renewed just now is used even if it is short-lived, or a backend minting short
    // tokens would loop here.
    if (!tokenIsFresh && shared.token.renewalDue()) {
      void this.#renewThenSubscribe(shared);
      return;
    }
    const sid = `s${++this.#nextSid}`;
    const from = shared.resumeFrom();
    const frame: SubscribeFrame = { op: 'subscribe', sid, token: shared.token.value };
    if (from !== undefined) frame.from = from;
    if (!this.#conn.send(frame)) return;
    this.#bySid.set(sid, shared);
    shared.subscribing(sid, from);
    this.#awaitSubscribed(shared, sid);
  }

  /**
   * A subscribe the relay never answers (lost on a proxy, a relay stuck on it) would leave the
   * subscription `connecting` forever: past the deadline it is withdrawn (an `unsubscribe`, so
   * a late answer cannot make it a duplicate) and sent again with backoff.
   */
  #awaitSubscribed(shared: SharedSubscription, sid: string): void {
    const deadline = this.#deadline;
    if (deadline === undefined) return;
    shared.awaitAnswer(
      deadline.clock.after(deadline.timeoutMs, () => {
        if (this.current(sid) !== shared || shared.answered) return;
        shared.unbind();
        this.#bySid.delete(sid);
        this.#conn.send({ op: 'unsubscribe', sid });
        shared.report({
          code: 'request_timeout',
          retryable: true,
          message: `subscribe ${sid} unanswered for ${deadline.timeoutMs} ms; subscribing again`,
        });
        shared.setPhase('idle');
        this.#scheduleRetry(shared);
      }),
    );
  }

  async #renewThenSubscribe(shared: SharedSubscription): Promise<void> {
    const renewal = shared.token.renew();
    if (renewal === undefined) return;
    shared.setPreparing(true);
    const outcome = await renewal;
    shared.setPreparing(false);
    if (this.#byStream.get(shared.stream) !== shared) return;
    if (outcome.ok) {
      this.subscribe(shared, true);
    } else if (outcome.error.retryable) {
      shared.report(outcome.error);
      this.#scheduleRetry(shared);
    } else {
      this.drop(shared, outcome.error);
    }
  }

  #scheduleRetry(shared: SharedSubscription): void {
    shared.retryLater(
      (attempt) => backoffDelay(attempt, this.#backoff.baseMs, this.#backoff.maxMs),
      () => {
        if (this.#byStream.get(shared.stream) === shared) this.subscribe(shared, false);
      },
    );
  }

  #refreshContext(shared: SharedSubscription): RefreshContext {
    return {
      isCurrent: (sid) => this.current(sid) === shared,
      send: (frame) => this.#conn.send(frame),
      report: (error) => shared.report(error),
      retryDelay: (attempt) => backoffDelay(attempt, this.#backoff.baseMs, this.#backoff.maxMs),
      ...(this.#deadline === undefined ? {} : { deadline: this.#deadline }),
    };
  }

  drop(shared: SharedSubscription, error: SubscriptionError): void {
    const sid = shared.unbind();
    if (sid !== undefined) this.#bySid.delete(sid);
    this.#byStream.delete(shared.stream);
    shared.closeAll(error, this.#onReleased);
  }

  /** Removes an unsubscribed subscriber; the relay subscription ends with its last subscriber. */
  detach(sub: Subscriber): void {
    const shared = sub.stream === undefined ? undefined : this.#byStream.get(sub.stream);
    if (shared === undefined || !shared.remove(sub) || shared.size > 0) return;
    shared.cancelRetry();
    this.#byStream.delete(shared.stream);
    const sid = shared.unbind();
    if (sid !== undefined) {
      this.#bySid.delete(sid);
      this.#conn.send({ op: 'unsubscribe', sid });
    }
  }
}
