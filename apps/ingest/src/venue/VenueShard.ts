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

/**
 * One MQTT session and the symbols assigned to it. What the venue holds is tracked apart from
 * what is wanted: `confirmed` is what a 200 said, `maybe` what was sent without an answer (a
 * timeout, a dropped connection) and may still land — so a later diff unsubscribes it rather
 * than leaking one of the session's slots.
 */
export class VenueShard {
  private list: readonly string[] = [];
  private listed = new Set<string>();
  readonly confirmed = new Set<string>();
  readonly maybe = new Set<string>();
  connected = false;
  /** Set on every CONNACK: the venue forgot the session's list, so the whole of it is sent again. */
  needsReplay = false;
  attempt: Attempt | undefined;
  /** Consecutive failed re-asserts; the notice latches on 0 → 1 and back. */
  reassertFailures = 0;
  retryAttempt = 0;
  retryTimer: NodeJS.Timeout | undefined;
  /** Crashes since the session last worked: backs the reopen off and latches the notice. */
  crashes = 0;
  reopenTimer: NodeJS.Timeout | undefined;
  /** A refused CONNECT that retrying cannot fix was reported (latched until a CONNACK). */
  refusalReported = false;
  /** Bumped when the session is replaced, so events from the old one are dropped. */
  generation = 0;
  /** Dropped from the feed: nothing may be applied to it any more. */
  retired = false;
  /**
   * Subscribes we stopped waiting for (deadline, transport error), until when the venue might
   * still apply them. An unsubscribe sent meanwhile can be overtaken by such a late subscribe,
   * so each re-assert unsubscribes these once more while they are unwanted.
   */
  private readonly ghosts = new Map<string, number>();

  constructor(
    readonly index: number,
    public sessionId: string,
    public session: VenueSession,
  ) {}

  /** Desired list, in assignment order. */
  get symbols(): readonly string[] {
    return this.list;
  }

  set symbols(symbols: readonly string[]) {
    this.list = symbols;
    this.listed = new Set(symbols);
  }

  has(symbol: string): boolean {
    return this.listed.has(symbol);
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

  /**
   * The venue forgets a session's subscriptions with its connection. Ghosts are kept unless the
   * session id changes: a request abandoned at a drop can still land once the same id registers again.
   */
  forgetVenueState(newSessionId: boolean): void {
    this.confirmed.clear();
    this.maybe.clear();
    if (newSessionId) this.ghosts.clear();
  }

  /** Stops a pending retry: a fresh connection starts its own schedule. */
  resetRetry(): void {
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
