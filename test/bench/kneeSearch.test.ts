import { describe, expect, it } from 'vitest';
import { KNEE_BRACKET, kneeBracket, searchKnee } from './fanoutBench.js';
import type { FanoutResult, KneeStep, StepResult } from './fanoutBench.js';

/** A server whose knee is `threshold`: every rate up to it passes. */
function server(threshold: number): { run: (rate: number) => Promise<KneeStep>; rates: number[] } {
  const rates: number[] = [];
  return {
    rates,
    run: (rate) => {
      rates.push(rate);
      return Promise.resolve({ rate, pass: rate <= threshold });
    },
  };
}

const quiet = (): void => undefined;

describe('searchKnee', () => {
  it.each([30_000, 71_000, 99_000, 566_000, 1_000_000])(
    'brackets a knee of %i within KNEE_BRACKET in three midpoints after the doubling',
    async (threshold) => {
      const s = server(threshold);
      const { knee, kneeFail } = await searchKnee(s.run, 25_000, 7, undefined, quiet);
      expect(knee?.rate).toBeLessThanOrEqual(threshold);
      expect(kneeFail?.rate).toBeGreaterThan(threshold);
      expect((kneeFail?.rate ?? 0) / (knee?.rate ?? 1)).toBeLessThanOrEqual(KNEE_BRACKET);
      const doublings = s.rates.filter((r) => Number.isInteger(Math.log2(r / 25_000))).length;
      expect(s.rates.length - doublings).toBe(3);
    },
  );

  it('looks below the first rate when it fails, then bisects there', async () => {
    const s = server(9_000);
    const { knee, kneeFail } = await searchKnee(s.run, 25_000, 7, undefined, quiet);
    expect(s.rates.slice(0, 3)).toEqual([25_000, 12_500, 6_250]);
    expect(knee?.rate).toBeLessThanOrEqual(9_000);
    expect(kneeFail?.rate).toBeGreaterThan(9_000);
    expect((kneeFail?.rate ?? 0) / (knee?.rate ?? 1)).toBeLessThanOrEqual(KNEE_BRACKET);
  });

  it('has no knee when nothing down to a sixteenth passes, and only a lower bound when nothing fails', async () => {
    expect(await searchKnee(server(100).run, 25_000, 7, undefined, quiet)).toEqual({ knee: null, kneeFail: null });
    const s = server(Infinity);
    const { knee, kneeFail } = await searchKnee(s.run, 25_000, 3, undefined, quiet);
    expect(knee?.rate).toBe(100_000);
    expect(kneeFail).toBeNull();
    expect(s.rates).toEqual([25_000, 50_000, 100_000]);
  });

  it('stops bisecting when the time budget is spent, and says what bracket it left', async () => {
    const lines: string[] = [];
    const s = server(71_000);
    const { knee, kneeFail } = await searchKnee(
      s.run,
      25_000,
      7,
      1_000,
      (l) => lines.push(l),
      () => 5_000,
    );
    expect([knee?.rate, kneeFail?.rate]).toEqual([50_000, 100_000]);
    expect(lines).toEqual(['    time budget: knee left between 50k and 100k']);
  });
});

describe('kneeBracket', () => {
  const step = (rate: number, pass: boolean): StepResult => ({ rate, pass }) as StepResult;
  it('derives the failing side from the steps of a run that did not record it', () => {
    const r = {
      knee: step(400_000, true),
      steps: [step(25_000, true), step(400_000, true), step(800_000, false), step(566_000, false), step(12_500, false)],
    } as unknown as FanoutResult;
    expect(kneeBracket(r)).toEqual({ pass: 400_000, fail: 566_000 });
  });
});
