import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoffDelay.js';

describe('backoffDelay (full jitter)', () => {
  // Just below 1: the largest delay the random source can produce for an attempt.
  const top = () => 1 - Number.EPSILON;

  it('doubles the ceiling per attempt up to maxMs', () => {
    expect([0, 1, 2, 3, 6, 7, 8, 200].map((a) => backoffDelay(a, 250, 30_000, top) + 1)).toEqual([
      250, 500, 1000, 2000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('stays within [0, ceiling) for the extremes of the random source', () => {
    for (const attempt of [0, 1, 5, 10, 1000, Number.MAX_SAFE_INTEGER]) {
      const ceiling = Math.min(30_000, 250 * 2 ** Math.min(attempt, 64));
      expect(backoffDelay(attempt, 250, 30_000, () => 0)).toBe(0);
      const delay = backoffDelay(attempt, 250, 30_000, () => 0.999_999);
      expect(delay).toBeLessThan(ceiling);
      expect(delay).toBeGreaterThanOrEqual(ceiling - 1);
    }
  });

  it('is uniform over the window: the mean of many draws sits near half the ceiling', () => {
    const draws = Array.from({ length: 20_000 }, () => backoffDelay(3, 100, 5_000));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(800);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(mean).toBeGreaterThan(380);
    expect(mean).toBeLessThan(420);
  });

  it('counts a negative attempt as 0 and drops the fraction of a fractional one', () => {
    expect(backoffDelay(-1, 250, 30_000, top)).toBe(249);
    expect(backoffDelay(2.7, 250, 30_000, top)).toBe(999);
  });

  it('returns whole milliseconds and never reaches maxMs with Math.random', () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const delay = backoffDelay(attempt, 250, 30_000);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(30_000);
    }
  });
});
