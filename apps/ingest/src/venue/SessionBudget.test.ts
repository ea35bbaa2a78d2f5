import { describe, expect, it } from 'vitest';
import { SessionBudget } from './SessionBudget.js';

describe('SessionBudget', () => {
  it('counts sessions taken against the max and tells listeners when one is given back', () => {
    const budget = new SessionBudget(2);
    let freed = 0;
    const stop = budget.onFreed(() => (freed += 1));
    budget.take();
    budget.take();
    expect(budget.free).toBe(0);
    expect(() => budget.take()).toThrow(RangeError);
    budget.give();
    expect([budget.free, freed]).toEqual([1, 1]);
    stop();
    budget.give();
    expect([budget.free, freed]).toEqual([2, 1]);
    expect(() => budget.give()).toThrow(RangeError);
  });

  it('refuses a max that is not a positive integer', () => {
    for (const max of [0, -1, 1.5]) expect(() => new SessionBudget(max)).toThrow(RangeError);
  });
});
