import { describe, expect, it } from 'vitest';
import { aggregateRounds, lowerMedianIndex, median } from './aggregateRounds.js';
import type { StepResult } from './fanoutBench.js';
import type { TaskRound } from './tasksBench.js';

function round(r: number, serverUs: number | null, redisUs: number | null, p99Ms: number, received = 1_500): TaskRound {
  const step: StepResult = {
    rate: 1_000,
    eventsPerSecond: 1_000,
    expected: 1_500,
    received,
    deliveredRatio: received / 1_500,
    achieved: 1_000,
    p50Ms: 2,
    p99Ms,
    maxMs: 60,
    serverCpu: 0.2,
    redisCpu: 0.1,
    loadCpu: 0.1,
    serverUsPerDelivery: 30,
    pass: true,
  };
  return {
    series: 'socketio',
    workload: '1,000 streams × 1 at 1k/s',
    streams: 1_000,
    eventsPerSecond: 1_000,
    sockets: 100,
    skipped: null,
    openFailed: r === 1 ? 2 : 0,
    step,
    redisUsPerEntry: redisUs,
    serverUsPerEntry: serverUs,
    round: r,
    position: r % 2,
  };
}

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNull();
  });
});

describe('lowerMedianIndex', () => {
  it('finds the index of the lower median, leaving nulls out and the earliest on ties', () => {
    expect(lowerMedianIndex([30, 10, 20])).toBe(2);
    expect(lowerMedianIndex([40, 10, 30, 20])).toBe(3);
    expect(lowerMedianIndex([null, 50, 10])).toBe(2);
    expect(lowerMedianIndex([5, 5])).toBe(0);
    expect(lowerMedianIndex([null, null])).toBeNull();
  });
});

describe('aggregateRounds', () => {
  it('reports the medians of the rounds, the median round’s latency, and the share delivered over all rounds', () => {
    const rounds = [round(0, 200, 100, 40), round(1, 140, 90, 25, 1_497), round(2, 170, 130, 90)];
    const a = aggregateRounds(rounds);
    expect(a.serverUsPerEntry).toBe(170);
    expect(a.redisUsPerEntry).toBe(100);
    expect(a.medianRound).toBe(2);
    expect(a.step?.p99Ms).toBe(90);
    expect(a.deliveredShare).toBeCloseTo(4_497 / 4_500);
    expect(a.openFailed).toBe(2);
    expect(a.rounds).toEqual(rounds);
    expect(a.skipped).toBeNull();
    expect(a).not.toHaveProperty('round');
    expect(a).not.toHaveProperty('position');
  });

  it('averages the middle two of an even count, and shows the round at the lower one', () => {
    const a = aggregateRounds([round(0, 200, 120, 40), round(1, 100, 80, 25)]);
    expect(a.serverUsPerEntry).toBe(150);
    expect(a.redisUsPerEntry).toBe(100);
    expect(a.medianRound).toBe(1);
    expect(a.step?.p99Ms).toBe(25);
  });

  it('leaves a round without a cost out of that median', () => {
    const a = aggregateRounds([round(0, null, null, 40, 0), round(1, 100, 80, 25)]);
    expect(a.serverUsPerEntry).toBe(100);
    expect(a.redisUsPerEntry).toBe(80);
    expect(a.medianRound).toBe(1);
  });

  it('refuses no rounds at all', () => {
    expect(() => aggregateRounds([])).toThrow(/no rounds/);
  });
});
