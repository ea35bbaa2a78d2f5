export interface VenueRateLimit {
  /** Tokens added per second. */
  perSecond: number;
  /** Most tokens the bucket holds; also what a fresh bucket starts with. */
  burst: number;
}

/**
 * The venue's own request limit, fail-fast: a call that finds the bucket empty is answered 429
 * at once. It lives here rather than coming from the ingest adapter so the simulator does not
 * share code, and therefore bugs, with the client it is testing.
 */
export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly limit: VenueRateLimit,
    private readonly now: () => number = Date.now,
  ) {
    TokenBucket.assertValid(limit);
    this.tokens = limit.burst;
    this.refilledAt = now();
  }

  static assertValid(limit: VenueRateLimit): void {
    if (!(limit.perSecond > 0) || !Number.isFinite(limit.perSecond) || !Number.isInteger(limit.burst) || limit.burst < 1) {
      throw new RangeError(`rate limit needs a finite perSecond > 0 and an integer burst >= 1, got ${JSON.stringify(limit)}`);
    }
  }

  tryTake(): boolean {
    const at = this.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((at - this.refilledAt) / 1000) * this.limit.perSecond);
    this.refilledAt = at;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
