/**
 * Time as ingest's runs see it: epoch milliseconds and one-shot timers. The same shape as the
 * relay's `Clock` (apps/relay/src/Clock.ts), so one implementation serves both once they share a
 * package. Injected so that failover windows, hold-downs and backoffs are tested without waiting.
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

/** Resolves after `ms` on `clock`, or at once when `signal` aborts (so a stop never waits a backoff out). */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.after(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
