import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RetryTimer } from './RetryTimer.js';

describe('RetryTimer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('waits the delay for each attempt in turn, keeps one retry pending, and counts from 0 again after resetAttempts', () => {
    const timer = new RetryTimer();
    const asked: number[] = [];
    const delayFor = (attempt: number): number => (asked.push(attempt), 100 * (attempt + 1));
    let runs = 0;
    timer.schedule(delayFor, () => (runs += 1));
    timer.schedule(delayFor, () => (runs += 10));
    expect(timer.pending).toBe(true);
    vi.advanceTimersByTime(199);
    expect(runs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(runs).toBe(10);
    expect(timer.pending).toBe(false);
    timer.schedule(delayFor, () => (runs += 100));
    timer.cancel();
    vi.advanceTimersByTime(10_000);
    expect(runs).toBe(10);
    timer.resetAttempts();
    timer.schedule(delayFor, () => (runs += 1_000));
    expect(asked).toEqual([0, 1, 2, 0]);
    vi.advanceTimersByTime(100);
    expect(runs).toBe(1_010);
  });
});
