import { describe, expect, it } from 'vitest';
import { roundOrder } from './roundOrder.js';
import { runRounds } from './runRounds.js';

describe('roundOrder', () => {
  it('keeps the order in even rounds and reverses it in odd ones', () => {
    expect(roundOrder(['a', 'b'], 0)).toEqual(['a', 'b']);
    expect(roundOrder(['a', 'b'], 1)).toEqual(['b', 'a']);
    expect(roundOrder(['a', 'b', 'c'], 2)).toEqual(['a', 'b', 'c']);
    expect(roundOrder(['a', 'b', 'c'], 3)).toEqual(['c', 'b', 'a']);
  });

  it('leaves its argument as it was', () => {
    const series = ['a', 'b'] as const;
    roundOrder(series, 1);
    expect(series).toEqual(['a', 'b']);
  });
});

describe('runRounds', () => {
  it('measures every series once per round, alternating: A B, B A, A B', async () => {
    const calls: string[] = [];
    const runs = await runRounds({ series: ['A', 'B'], rounds: 3, deadline: Infinity }, (s, round, position) => {
      calls.push(`${s}${round}`);
      return Promise.resolve({ s, round, position });
    });
    expect(calls).toEqual(['A0', 'B0', 'B1', 'A1', 'A2', 'B2']);
    expect(runs.get('A')).toEqual([
      { s: 'A', round: 0, position: 0 },
      { s: 'A', round: 1, position: 1 },
      { s: 'A', round: 2, position: 0 },
    ]);
    expect(runs.get('B')?.map((r) => r.position)).toEqual([1, 0, 1]);
  });

  it('starts no round after the deadline but finishes a round it started, so every measurement has its pair', async () => {
    let clock = 0;
    const spent: number[] = [];
    const runs = await runRounds(
      { series: ['A', 'B'], rounds: 3, deadline: 15, now: () => clock, onBudgetSpent: (n) => spent.push(n) },
      (s, round) => {
        clock += 10;
        return Promise.resolve(`${s}${round}`);
      },
    );
    expect(runs.get('A')).toEqual(['A0']);
    expect(runs.get('B')).toEqual(['B0']);
    expect(spent).toEqual([1]);
  });

  it('measures nothing once the budget is spent, and nothing with no series', async () => {
    const none = await runRounds({ series: ['A'], rounds: 2, deadline: 0, now: () => 1 }, () => Promise.resolve(1));
    expect(none.get('A')).toEqual([]);
    const empty = await runRounds({ series: [], rounds: 2, deadline: Infinity }, () => Promise.resolve(1));
    expect(empty.size).toBe(0);
  });
});
