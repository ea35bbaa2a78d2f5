import { describe, expect, it } from 'vitest';
import { pairedRatios } from './pairedRatios.js';
import type { StepResult } from './fanoutBench.js';
import type { TaskResult, TaskRound } from './tasksBench.js';

const step = { p50Ms: 2, p99Ms: 30, deliveredRatio: 1, expected: 1, received: 1, pass: true } as StepResult;

function rounds(values: readonly (number | null)[]): TaskRound[] {
  return values.map((v, round) => ({
    series: 'relay-notify',
    workload: 'w',
    streams: 1,
    eventsPerSecond: 1,
    sockets: 1,
    skipped: null,
    openFailed: 0,
    step: v === null ? null : step,
    redisUsPerEntry: v,
    serverUsPerEntry: v,
    round,
    position: 0,
  }));
}

function summary(median: number | null, values: readonly (number | null)[]): TaskResult {
  const [base] = rounds([median]);
  if (base === undefined) throw new Error('one round');
  return { ...base, rounds: rounds(values) };
}

describe('pairedRatios', () => {
  it('divides the medians, and each round by the same round of the other series', () => {
    const p = pairedRatios(summary(150, [100, 200, 150]), summary(200, [200, 160, 300]), (r) => r.serverUsPerEntry);
    expect(p.ofMedians).toBeCloseTo(0.75);
    expect(p.perRound).toEqual([0.5, 1.25, 0.5]);
    expect(p.min).toBe(0.5);
    expect(p.max).toBe(1.25);
  });

  it('pairs only rounds both series measured with a cost', () => {
    const p = pairedRatios(summary(100, [100, null, 120]), summary(100, [50, 100, 0]), (r) => r.serverUsPerEntry);
    expect(p.perRound).toEqual([2]);
    expect(p.min).toBe(2);
    expect(p.max).toBe(2);
  });

  it('leaves out a round in which either series failed its step', () => {
    const a = summary(100, [100, 300, 120]);
    const failed = a.rounds?.[1];
    if (failed?.step == null) throw new Error('round 1 has a step');
    const withFailure: TaskResult = { ...a, rounds: a.rounds?.map((r) => (r === failed ? { ...r, step: { ...step, pass: false } } : r)) };
    const p = pairedRatios(withFailure, summary(100, [50, 100, 60]), (r) => r.serverUsPerEntry);
    expect(p.perRound).toEqual([2, 2]);
    const failedMedian: TaskResult = { ...withFailure, step: { ...step, pass: false } };
    expect(pairedRatios(failedMedian, summary(100, [50, 100, 60]), (r) => r.serverUsPerEntry).ofMedians).toBeNull();
  });

  it('has no ratio without rounds or with a zero divisor', () => {
    const p = pairedRatios(summary(100, []), summary(0, []), (r) => r.serverUsPerEntry);
    expect(p).toEqual({ ofMedians: null, perRound: [], min: null, max: null });
  });
});
