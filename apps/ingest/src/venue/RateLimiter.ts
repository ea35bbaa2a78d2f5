export interface RateLimiterOptions {
  /** Sustained rate, tokens per second. */
  perSecond: number;
  /** Bucket size: how many calls may go back to back after a quiet spell. */
  burst: number;
  /** Milliseconds on a monotonic clock; injectable so tests control refill. */
  now?: () => number;
}

/** An `acquire` whose signal fired before it got a token. Named like the platform's so `name === 'AbortError'` checks work. */
export class RateLimiterAbortError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'aborted';
  readonly retryable = false;
  constructor(reason: unknown) {
    super('gave up waiting for a rate-limit token', { cause: reason });
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: RateLimiterAbortError) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * Token bucket shared by every caller of one venue key. Two ways in, because both kinds of caller
 * exist: `tryTake` for a caller that would rather fail now than wait, and `acquire` for timers
 * with nobody waiting on them — a periodic resubscribe that fails fast on a one-second throttle
 * loses a whole interval, and while the limiter stays contended it fails every interval, so a
 * quiet session is never recovered.
 */
export class RateLimiter {
  private readonly perMs: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private refilledAt: number;
  private readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor({ perSecond, burst, now = () => performance.now() }: RateLimiterOptions) {
    if (!(perSecond > 0) || !Number.isFinite(perSecond)) throw new RangeError(`perSecond must be a positive number, got ${perSecond}`);
    if (!(burst >= 1) || !Number.isFinite(burst)) throw new RangeError(`burst must be at least 1, got ${burst}`);
    this.perMs = perSecond / 1000;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Callers parked in `acquire`. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Takes a token if one is free. False while anyone is queued in `acquire`, even if the bucket
   * has refilled: otherwise a stream of fail-fast callers could starve the waiters indefinitely.
   */
  tryTake(): boolean {
    if (this.waiters.length > 0) return false;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Resolves once this caller holds a token; callers are served in arrival order. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(new RateLimiterAbortError(signal.reason));
    if (this.tryTake()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: () => this.abandon(waiter) };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
      this.schedule();
    });
  }

  private refill(): void {
    const now = this.now();
    // A clock that steps backwards must not drain the bucket.
    const elapsed = Math.max(0, now - this.refilledAt);
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.perMs);
    this.refilledAt = now;
  }

  /** One timer, for the head of the queue only: the others cannot be served before it anyway. */
  private schedule(): void {
    if (this.timer !== undefined || this.waiters.length === 0) return;
    this.refill();
    const waitMs = this.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - this.tokens) / this.perMs));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.serve();
    }, waitMs);
  }

  private serve(): void {
    this.refill();
    while (this.waiters.length > 0 && this.tokens >= 1) {
      const waiter = this.waiters.shift();
      if (waiter === undefined) break;
      this.tokens -= 1;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    this.schedule();
  }

  private abandon(waiter: Waiter): void {
    const at = this.waiters.indexOf(waiter);
    if (at === -1) return;
    this.waiters.splice(at, 1);
    waiter.reject(new RateLimiterAbortError(waiter.signal?.reason));
    // The head's timer is still right for whoever is head now; only an empty queue needs no timer.
    if (this.waiters.length === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
