/**
 * Time as the relay's per-socket logic sees it: wall-clock milliseconds (token claims are epoch
 * seconds, so this is Date.now, not a monotonic clock) and one-shot timers. Injected so that token
 * refresh and expiry can be tested without waiting for real tokens to age.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
