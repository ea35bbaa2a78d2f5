/**
 * Time as every part of streamgate sees it — the relay, ingest, the auth service and the browser
 * client: epoch milliseconds (token claims are epoch seconds, so this is Date.now, not a
 * monotonic clock) and one-shot timers. Injected so that deadlines, backoffs, schedules and
 * windows are tested on a `ManualClock` (`@streamgate/protocol/testing`) without waiting.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Runs `fn` once after `ms` milliseconds; the returned function cancels it (a no-op once it
   * ran). Below one millisecond it runs as soon as pending I/O has been handled.
   */
  after(ms: number, fn: () => void): () => void;
}

// A timer cannot wait less than a millisecond (Node rounds it up to one), so a shorter pause yields
// to I/O instead: the relay's readers coalesce over fractions of a millisecond.
const immediate: ((fn: () => void) => unknown) | undefined = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;

export const systemClock: Clock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    if (ms < 1 && immediate !== undefined) {
      let cancelled = false;
      immediate(() => {
        if (!cancelled) fn();
      });
      return () => {
        cancelled = true;
      };
    }
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
