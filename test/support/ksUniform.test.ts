import { describe, expect, it } from 'vitest';
import { ksUniform } from './ksUniform.js';
import { prng as seeded } from '@streamgate/testkit';

describe('ksUniform', () => {
  it('uses the asymptotic critical value c(α)/√n', () => {
    const r = ksUniform([0.5], 0, 1);
    expect(r.critical).toBeCloseTo(1.6276, 3);
    expect(
      ksUniform(
        Array.from({ length: 2_000 }, (_, i) => i),
        0,
        2_000,
      ).critical,
    ).toBeCloseTo(1.6276 / Math.sqrt(2_000), 5);
  });

  it('computes D exactly on a small sample', () => {
    // Sorted 0.1, 0.2, 0.9 against U(0,1): gaps are max(1/3−0.1, 0.1), max(2/3−0.2, 0.2−1/3), max(1−0.9, 0.9−2/3).
    expect(ksUniform([0.9, 0.1, 0.2], 0, 1).d).toBeCloseTo(2 / 3 - 0.2, 12);
  });

  it('accepts uniform samples, scaled to the window', () => {
    const random = seeded(42);
    for (const n of [200, 2_000]) {
      const r = ksUniform(
        Array.from({ length: n }, () => random() * 20_000),
        0,
        20_000,
      );
      expect(r.pass, `D=${r.d} critical=${r.critical}`).toBe(true);
    }
  });

  it('rejects what a drain must not look like: a herd at the start, a skew, half the window', () => {
    const random = seeded(7);
    const n = 2_000;
    const herd = Array.from({ length: n }, () => random() * 200);
    const skewed = Array.from({ length: n }, () => random() ** 1.3 * 20_000);
    const halfWindow = Array.from({ length: n }, () => random() * 10_000);
    for (const samples of [herd, skewed, halfWindow]) expect(ksUniform(samples, 0, 20_000).pass).toBe(false);
  });

  it('counts samples outside the range against uniformity', () => {
    const r = ksUniform(
      Array.from({ length: 100 }, (_, i) => 30_000 + i),
      0,
      20_000,
    );
    expect(r.d).toBe(1);
    expect(r.pass).toBe(false);
  });

  it('refuses empty input and an empty range', () => {
    expect(() => ksUniform([], 0, 1)).toThrow(RangeError);
    expect(() => ksUniform([1], 1, 1)).toThrow(RangeError);
  });
});
