/**
 * Symbols the venue refused (INVALID_SYMBOL), each until its own expiry. A refusal is a fact about
 * the venue's catalogue at one moment, not forever, so it expires; and because one unknown symbol
 * fails a whole batch, the planner leaves active ones out of every shard until then.
 */
export class RejectionList {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly defaultTtlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(defaultTtlMs > 0)) throw new RangeError(`defaultTtlMs must be positive, got ${defaultTtlMs}`);
  }

  /**
   * Records a refusal. A symbol already listed keeps the later of its two expiries: the venue
   * repeating itself never shortens a belief a caller deliberately made longer.
   */
  add(symbols: Iterable<string>, ttlMs: number = this.defaultTtlMs): void {
    if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${ttlMs}`);
    const until = this.now() + ttlMs;
    for (const symbol of symbols) {
      const current = this.expiries.get(symbol);
      if (current === undefined || current < until) this.expiries.set(symbol, until);
    }
  }

  /** True while the refusal is in force; an expired entry counts as gone even before `prune`. */
  has(symbol: string): boolean {
    const until = this.expiries.get(symbol);
    return until !== undefined && until > this.now();
  }

  /** When the refusal of `symbol` ends, while it is in force. */
  expiry(symbol: string): number | undefined {
    return this.has(symbol) ? this.expiries.get(symbol) : undefined;
  }

  active(): Set<string> {
    const now = this.now();
    const out = new Set<string>();
    for (const [symbol, until] of this.expiries) if (until > now) out.add(symbol);
    return out;
  }

  /** Forgets expired entries and returns them, so the caller can put those symbols back in play. */
  prune(): string[] {
    const now = this.now();
    const expired: string[] = [];
    for (const [symbol, until] of this.expiries) {
      if (until <= now) {
        expired.push(symbol);
        this.expiries.delete(symbol);
      }
    }
    return expired;
  }

  /** The earliest expiry still held (possibly already past, meaning `prune` has work), for arming one timer. */
  nextExpiry(): number | undefined {
    let next: number | undefined;
    for (const until of this.expiries.values()) if (next === undefined || until < next) next = until;
    return next;
  }

  get size(): number {
    return this.expiries.size;
  }
}
