import { describe, expect, it } from 'vitest';
import type { DemandSource } from './DemandSource.js';
import { UnitedDemandSource } from './UnitedDemandSource.js';

const fixed = (...keys: string[]): DemandSource => ({ demanded: () => Promise.resolve(new Set(keys)) });
const failing = (message: string): DemandSource => ({ demanded: () => Promise.reject(new Error(message)) });

describe('UnitedDemandSource', () => {
  it('unites the demand of every source', async () => {
    const united = new UnitedDemandSource(
      [
        { name: 'a', source: fixed('s1', 's2') },
        { name: 'b', source: fixed('s2', 's3') },
      ],
      () => undefined,
    );
    expect(await united.demanded()).toEqual(new Set(['s1', 's2', 's3']));
  });

  it('reports a failed source and keeps the demand of the others', async () => {
    const errors: [string, unknown][] = [];
    const united = new UnitedDemandSource(
      [
        { name: 'a', source: fixed('s1') },
        { name: 'b', source: failing('b is down') },
      ],
      (name, error) => errors.push([name, error]),
    );
    expect(await united.demanded()).toEqual(new Set(['s1']));
    expect(errors).toEqual([['b', new Error('b is down')]]);
  });

  it('rejects when no source answers (demand unknown)', async () => {
    const errors: string[] = [];
    const united = new UnitedDemandSource(
      [
        { name: 'a', source: failing('a is down') },
        { name: 'b', source: failing('b is down') },
      ],
      (name) => errors.push(name),
    );
    await expect(united.demanded()).rejects.toThrow('a is down');
    expect(errors).toEqual([]);
  });

  it('refuses an empty list', () => {
    expect(() => new UnitedDemandSource([], () => undefined)).toThrow(RangeError);
  });
});
