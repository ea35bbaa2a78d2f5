/**
 * Time as the client's liveness and request deadlines see it: milliseconds and one-shot timers.
 * Injected (`RelayClientOptions.clock`) so those deadlines can be tested without waiting.
 */
export interface ClientClock {
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClientClock: ClientClock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
