import type { FeedAnswer, FeedError } from './FeedError.js';

/** What the feed knows about one symbol, as a caller waiting on it needs it. */
export interface SymbolView {
  rejectedUntil(symbol: string): number | undefined;
  unplaced(symbol: string): boolean;
  /** The venue answered 200 for it on the session that carries it. */
  confirmed(symbol: string): boolean;
  /** Some session may still hold it at the venue. */
  held(symbol: string): boolean;
  /** The shard it is assigned to is connected (false while connecting or reconnecting). */
  onConnectedShard(symbol: string): boolean;
}

interface PendingCall {
  readonly add: ReadonlySet<string>;
  readonly remove: ReadonlySet<string>;
  readonly startedAt: number;
  readonly resolve: (answer: FeedAnswer) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Callers waiting on reconciles. Each call arms exactly one timer when it arrives, keyed by the
 * call and not by a shard or an attempt: a retry that moves its symbols to another shard, or a
 * session that reconnects under it, cannot leave the call matching nothing. At that deadline
 * (two thirds of the caller's own timeout) an unfinished call gets a typed "still working"
 * answer, and the work carries on.
 */
export class FeedCalls {
  private readonly pending = new Set<PendingCall>();

  constructor(
    private readonly view: SymbolView,
    private readonly answerWithinMs: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  wait(add: Iterable<string>, remove: Iterable<string>): Promise<FeedAnswer> {
    return new Promise((resolve) => {
      const call: PendingCall = {
        add: new Set(add),
        remove: new Set(remove),
        startedAt: this.now(),
        resolve,
        timer: setTimeout(() => this.expire(call), this.answerWithinMs),
      };
      this.pending.add(call);
      this.settle();
    });
  }

  /** Answers every call whose symbols have all reached a final state. */
  settle(): void {
    for (const call of this.pending) {
      const answer = this.evaluate(call);
      if (answer !== undefined) this.finish(call, answer);
    }
  }

  /** Answers calls touching `symbols` with `error` (a crashed session, a closing feed). */
  fail(error: FeedError, symbols?: ReadonlySet<string>): void {
    for (const call of this.pending) {
      if (symbols === undefined || [...call.add, ...call.remove].some((s) => symbols.has(s))) this.finish(call, { ok: false, error });
    }
  }

  private evaluate(call: PendingCall): FeedAnswer | undefined {
    const refused: string[] = [];
    const full: string[] = [];
    let until = 0;
    for (const symbol of call.add) {
      const rejected = this.view.rejectedUntil(symbol);
      if (rejected !== undefined) {
        refused.push(symbol);
        until = Math.max(until, rejected);
      } else if (this.view.unplaced(symbol)) full.push(symbol);
      else if (!this.view.confirmed(symbol)) return undefined;
    }
    for (const symbol of call.remove) if (this.view.held(symbol)) return undefined;
    if (full.length > 0) {
      return {
        ok: false,
        error: {
          code: 'capacity',
          retryable: false,
          symbols: full,
          message: `no session has room for ${full.length} symbol(s) within the venue's ceilings`,
        },
      };
    }
    if (refused.length > 0) {
      return {
        ok: false,
        error: { code: 'symbols_refused', retryable: false, symbols: refused, until, message: `the venue refused ${refused.join(', ')}` },
      };
    }
    return { ok: true };
  }

  private expire(call: PendingCall): void {
    if (!this.pending.has(call)) return;
    const answer = this.evaluate(call);
    if (answer !== undefined) return this.finish(call, answer);
    const ms = this.now() - call.startedAt;
    // Only symbols still waiting decide which: a refused or unplaced symbol is on no shard at all.
    const waiting = [...call.add].filter(
      (s) => this.view.rejectedUntil(s) === undefined && !this.view.unplaced(s) && !this.view.confirmed(s),
    );
    const parked = waiting.some((s) => !this.view.onConnectedShard(s));
    this.finish(call, {
      ok: false,
      error: parked
        ? {
            code: 'connack_timeout',
            retryable: true,
            ms,
            message: `a session this call needs is still connecting after ${ms} ms; it is subscribed when it connects`,
          }
        : {
            code: 'reconcile_pending',
            retryable: true,
            ms,
            message: `the venue has not confirmed after ${ms} ms; the reconcile carries on`,
          },
    });
  }

  private finish(call: PendingCall, answer: FeedAnswer): void {
    clearTimeout(call.timer);
    this.pending.delete(call);
    call.resolve(answer);
  }
}
