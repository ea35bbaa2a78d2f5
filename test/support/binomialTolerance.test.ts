import { describe, expect, it } from 'vitest';
import { prng as seeded } from '@streamgate/testkit';
import { binomialTolerance } from './binomialTolerance.js';

describe('binomialTolerance', () => {
  it('is 0 where the outcome is certain', () => {
    expect(binomialTolerance(40, 0, 1e-5)).toBe(0);
    expect(binomialTolerance(40, 1, 1e-5)).toBe(0);
    expect(binomialTolerance(0, 0.5, 1e-5)).toBe(0);
  });

  it('matches hand-computed tails of a small binomial', () => {
    // Bin(4, ½): P(X=0)=P(X=4)=1/16, P(1)=P(3)=4/16, P(2)=6/16; the mean is 2.
    expect(binomialTolerance(4, 0.5, 0.2)).toBe(1); // P(|X−2| > 1) = 2/16 ≤ 0.2, P(|X−2| > 0) = 10/16 is not
    expect(binomialTolerance(4, 0.5, 0.1)).toBe(2); // 2/16 > 0.1, so the whole range
  });

  it('grows like the standard deviation: about 4.4 σ at alpha 1e-5 in the middle', () => {
    const k = binomialTolerance(100, 0.5, 1e-5);
    expect(k).toBeGreaterThanOrEqual(20);
    expect(k).toBeLessThanOrEqual(23);
    expect(binomialTolerance(100, 0.05, 1e-5)).toBeLessThan(k);
  });

  it('holds for simulated drains: uniform delays, counted at fractions of the window', () => {
    const random = seeded(7);
    const n = 60;
    let outside = 0;
    let samples = 0;
    for (let run = 0; run < 2_000; run++) {
      const delays = Array.from({ length: n }, () => random());
      for (const f of [0.1, 0.3, 0.5, 0.7, 0.9]) {
        const left = delays.filter((d) => d >= f).length;
        samples++;
        if (Math.abs(left - n * (1 - f)) > binomialTolerance(n, 1 - f, 0.01)) outside++;
      }
    }
    // At most 1% of samples by construction; a wrong pmf would put far more (or none) outside.
    expect(outside / samples).toBeLessThanOrEqual(0.01);
    expect(outside / samples).toBeGreaterThan(0.001);
  });
});
