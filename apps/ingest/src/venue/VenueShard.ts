import { backoffDelay } from '@streamgate/protocol';
import type { VenueSession } from './VenueSession.js';

export type AttemptKind = 'diff' | 'replay' | 'reassert';

/** One HTTP reconcile in flight; only its own deadline or its own answer can conclude it. */
export interface Attempt {
  readonly token: number;
  readonly kind: AttemptKind;
  readonly startedAt: number;
  readonly abort: AbortController;
  readonly deadline: NodeJS.Timeout;
  readonly subscribe: readonly string[];
  readonly unsubscribe: readonly string[];
}

/** What a shard needs of its MQTT session: the seam VenueFeed's unit tests replace with a fake. */
export type ShardSession = Pick<VenueSession, 'open' | 'close' | 'destroy'>;

/** Opens the session for `shard`'s current session id and generation (it must not use the session yet). */
export type OpenShardSession = (shard: VenueShard) => ShardSession;

/**
 * One MQTT session and the symbols assigned to it. What the venue holds is tracked apart from
 * what is wanted: `confirmed` is what a 200 said, `maybe` what was sent without an answer (a
 * timeout, a dropped connection) and may still land — so a later diff unsubscribes it rather
 * than leaking one of the session's slots. Everything changes through methods that keep the
 * shard's invariants: a link going up forgets the venue's side and owes a replay, a replaced
 * session bumps the generation (so events from the old one are dropped), a retired shard runs
 * nothing, and one attempt at most is in flight.
 */
export class VenueShard {
  private list: readonly string[] = [];
  private listed = new Set<string>();
  private readonly confirmed = new Set<string>();
  private readonly maybe = new Set<string>();
  private isConnected = false;
  /** Set on every CONNACK: the venue forgot the session's list, so the whole of it is sent again. */
  private replayOwed = false;
  private inFlight: Attempt | undefined;
  /** Consecutive failed re-asserts; the notice latches on 0 → 1 and back. */
  private reassertFailureCount = 0;
  private retryAttempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Crashes since the session last worked: backs the reopen off and latches the notice. */
  private crashCount = 0;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** A refused CONNECT that retrying cannot fix was reported (latched until a CONNACK). */
  private refusalReported = false;
  private gen = 0;
  private isRetired = false;
  /**
   * Subscribes we stopped waiting for (deadline, transport error), until when the venue might
   * still apply them. An unsubscribe sent meanwhile can be overtaken by such a late subscribe,
   * so each re-assert unsubscribes these once more while they are unwanted.
   */
  private readonly ghosts = new Map<string, number>();
  private id: string;
  private live: ShardSession;

  constructor(
    readonly index: number,
    private readonly newSessionId: () => string,
    private readonly openSession: OpenShardSession,
  ) {
    this.id = newSessionId();
    this.live = openSession(this);
  }

  get sessionId(): string {
    return this.id;
  }

  get session(): ShardSession {
    return this.live;
  }

  /** Bumped when the session is replaced, so events from the old one are dropped. */
  get generation(): number {
    return this.gen;
  }

  get connected(): boolean {
    return this.isConnected;
  }

  /** Dropped from the feed: nothing may be applied to it any more. */
  get retired(): boolean {
    return this.isRetired;
  }

  get attempt(): Attempt | undefined {
    return this.inFlight;
  }

  get reassertFailures(): number {
    return this.reassertFailureCount;
  }

  get confirmedCount(): number {
    return this.confirmed.size;
  }

  /** Whether nothing stops a reconcile now: connected, live, idle and not waiting out a retry. */
  get ready(): boolean {
    return !this.isRetired && this.inFlight === undefined && this.isConnected && this.retryTimer === undefined;
  }

  /** Desired list, in assignment order. */
  get symbols(): readonly string[] {
    return this.list;
  }

  assign(symbols: readonly string[]): void {
    this.list = symbols;
    this.listed = new Set(symbols);
  }

  has(symbol: string): boolean {
    return this.listed.has(symbol);
  }

  isConfirmed(symbol: string): boolean {
    return this.confirmed.has(symbol);
  }

  /** The venue holds it, or may: confirmed, or sent without an answer. */
  mayHold(symbol: string): boolean {
    return this.confirmed.has(symbol) || this.maybe.has(symbol);
  }

  /** Confirmed plus `adding`, counted once each: what the session would hold after a subscribe. */
  wouldHold(adding: readonly string[]): number {
    return new Set([...this.confirmed, ...adding]).size;
  }

  diff(): { subscribe: string[]; unsubscribe: string[] } {
    return { subscribe: this.list.filter((s) => !this.confirmed.has(s)), unsubscribe: this.unwanted([this.confirmed, this.maybe]) };
  }

  /** Symbols not wanted here any more that may still hold a slot, including late-landing ghosts. */
  stale(now: number): string[] {
    for (const [s, until] of this.ghosts) if (until <= now) this.ghosts.delete(s);
    return this.unwanted([this.confirmed, this.maybe, this.ghosts.keys()]);
  }

  private unwanted(sources: Iterable<string>[]): string[] {
    const out = new Set<string>();
    for (const source of sources) for (const s of source) if (!this.listed.has(s)) out.add(s);
    return [...out];
  }

  /** CONNACK: the venue knows the session id and holds nothing for it; the whole list is owed. */
  linkUp(): void {
    this.isConnected = true;
    this.replayOwed = true;
    this.refusalReported = false;
    this.forgetVenueState(false);
    this.resetRetry();
  }

  /** The link dropped: the venue forgot the session's subscriptions with it. */
  linkDown(): void {
    this.isConnected = false;
    this.forgetVenueState(false);
  }

  /** True only for the first refusal since the last CONNACK: the notice latches. */
  latchRefusal(): boolean {
    if (this.refusalReported) return false;
    this.refusalReported = true;
    return true;
  }

  /** Counts a crash; the count backs the reopen off and latches the notice. */
  crashed(): number {
    return ++this.crashCount;
  }

  /**
   * Replaces the session at the same index with a fresh session id and generation; the venue's
   * side is forgotten, ghosts included (they belonged to the old id). Answers the old session,
   * for the caller to destroy, and opens the new one after `delayMs` unless replaced or retired.
   */
  replaceSession(delayMs: number): ShardSession {
    const old = this.live;
    this.gen += 1;
    this.isConnected = false;
    this.forgetVenueState(true);
    this.resetRetry();
    this.id = this.newSessionId();
    const session = this.openSession(this);
    this.live = session;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (!this.isRetired && this.live === session) session.open();
    }, delayMs);
    return old;
  }

  /** Takes the shard out of the feed: timers stop and nothing is applied to it any more. */
  retire(): void {
    this.isRetired = true;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
    this.resetRetry();
  }

  /** Whether a replay is owed, clearing it: the caller sends it now. */
  takeReplay(): boolean {
    const owed = this.replayOwed;
    this.replayOwed = false;
    return owed;
  }

  /** The replay did not take: it is owed again. */
  owesReplay(): void {
    this.replayOwed = true;
  }

  /** A re-assert sends the whole list, which is also the replay and supersedes a pending retry. */
  beginReassert(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.replayOwed = false;
  }

  /** An attempt starts; one at most is in flight. */
  begin(attempt: Attempt): void {
    if (this.inFlight !== undefined) throw new Error(`shard ${this.index}: attempt ${this.inFlight.token} is still in flight`);
    this.inFlight = attempt;
  }

  /** Ends the attempt in flight if it is `token`'s (any, when omitted), answering it. */
  end(token?: number): Attempt | undefined {
    const attempt = this.inFlight;
    if (attempt === undefined || (token !== undefined && attempt.token !== token)) return undefined;
    this.inFlight = undefined;
    return attempt;
  }

  /**
   * An attempt of `kind` succeeded: the retry backoff starts over, a replay or re-assert proves
   * the session works (its crash count clears). Answers how many re-asserts had failed before, if any.
   */
  succeeded(kind: AttemptKind): number {
    this.retryAttempt = 0;
    if (kind === 'diff') return 0;
    this.crashCount = 0;
    const failures = this.reassertFailureCount;
    this.reassertFailureCount = 0;
    return failures;
  }

  /** A re-assert failed; answers the consecutive count (the notice latches on the first). */
  reassertFailed(): number {
    return ++this.reassertFailureCount;
  }

  /** A diff or replay failed: `retry` runs after a growing backoff. */
  scheduleRetry(retry: () => void): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        retry();
      },
      backoffDelay(this.retryAttempt++, 250, 30_000),
    );
  }

  /**
   * The venue forgets a session's subscriptions with its connection. Ghosts are kept unless the
   * session id changes: a request abandoned at a drop can still land once the same id registers again.
   */
  private forgetVenueState(newSessionId: boolean): void {
    this.confirmed.clear();
    this.maybe.clear();
    if (newSessionId) this.ghosts.clear();
  }

  /** Stops a pending retry: a fresh connection starts its own schedule. */
  private resetRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryAttempt = 0;
  }

  subscribed(symbols: readonly string[]): void {
    for (const s of symbols) {
      this.confirmed.add(s);
      this.maybe.delete(s);
    }
  }

  unsubscribed(symbols: readonly string[]): void {
    for (const s of symbols) {
      this.confirmed.delete(s);
      this.maybe.delete(s);
    }
  }

  /** Sent, unanswered: may or may not be held by the venue, and may still land until `until`. */
  uncertain(symbols: readonly string[], until: number): void {
    for (const s of symbols) {
      if (!this.confirmed.has(s)) this.maybe.add(s);
      this.ghosts.set(s, Math.max(until, this.ghosts.get(s) ?? 0));
    }
  }
}
