/** Time as the Redis readers use it: injected, so their scheduling is testable without waiting. */
export interface TimerClock {
  now(): number;
  /** Resolves after `ms`; below one millisecond it only yields to I/O. */
  sleep(ms: number): Promise<void>;
}

export const systemTimerClock: TimerClock = {
  now: () => Date.now(),
  // A timer cannot wait less than a millisecond: a shorter pause yields to I/O instead.
  sleep: (ms) => new Promise((resolve) => (ms >= 1 ? setTimeout(resolve, ms) : setImmediate(resolve))),
};
