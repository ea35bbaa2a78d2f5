import { describe, expect, it } from 'vitest';
import { backoffCeiling, fullJitterDelay, resolveBackoff } from './backoff.js';

describe('full-jitter backoff', () => {
  const backoff = resolveBackoff({ baseMs: 250, maxMs: 30_000 });

  it('doubles the ceiling per attempt up to maxMs', () => {
    expect([0, 1, 2, 3, 6, 7, 8, 200].map((a) => backoffCeiling(a, backoff))).toEqual([
      250, 500, 1000, 2000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('stays within [0, ceiling) for the extremes of the random source', () => {
    for (const attempt of [0, 1, 5, 10, 1000]) {
      const ceiling = backoffCeiling(attempt, backoff);
      expect(fullJitterDelay(attempt, backoff, () => 0)).toBe(0);
      const top = fullJitterDelay(attempt, backoff, () => 0.999_999);
      expect(top).toBeLessThan(ceiling);
      expect(top).toBeGreaterThanOrEqual(ceiling - 1);
    }
  });

  it('never exceeds maxMs with Math.random', () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const delay = fullJitterDelay(attempt, backoff);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(30_000);
    }
  });

  it('uses 250 ms / 30 s by default and refuses nonsense', () => {
    expect(resolveBackoff(undefined)).toEqual({ baseMs: 250, maxMs: 30_000 });
    expect(() => resolveBackoff({ baseMs: 0 })).toThrow(RangeError);
    expect(() => resolveBackoff({ baseMs: 100, maxMs: 50 })).toThrow(RangeError);
  });
});
