import { describe, expect, it } from 'vitest';
import { classifyBound, deliveriesPerCpuSecond, parseCpuList, planPinning, usPer } from './pinning.js';

describe('planPinning', () => {
  it('gives the server the first core and the client side the rest', () => {
    expect(planPinning('auto', [0, 1], true)).toEqual({ pinned: true, plan: { serverCpus: '0', clientCpus: '1' } });
    expect(planPinning('auto', [2, 3, 5], true)).toEqual({ pinned: true, plan: { serverCpus: '2', clientCpus: '3,5' } });
  });

  it('says why it does not pin: switched off, no taskset, one core', () => {
    expect(planPinning('off', [0, 1], true)).toEqual({ pinned: false, reason: 'BENCH_PIN=off' });
    const noTaskset = planPinning('auto', [0, 1], false);
    expect(noTaskset.pinned ? '' : noTaskset.reason).toMatch(/taskset not found/);
    const oneCore = planPinning('auto', [0], true);
    expect(oneCore.pinned ? '' : oneCore.reason).toMatch(/only 1 core/);
  });
});

describe('parseCpuList', () => {
  it('expands ranges and single cores', () => {
    expect(parseCpuList('0-1\n')).toEqual([0, 1]);
    expect(parseCpuList('0,2-4,7')).toEqual([0, 2, 3, 4, 7]);
    expect(parseCpuList('')).toEqual([]);
  });
});

describe('classifyBound', () => {
  it('calls a knee server-bound from 90% of the server core up, client-bound below', () => {
    expect(classifyBound(0.9)).toBe('server');
    expect(classifyBound(1.02)).toBe('server');
    expect(classifyBound(0.899)).toBe('client');
    expect(classifyBound(0)).toBe('client');
  });
});

describe('cost per delivery', () => {
  it('turns a share of a core over a wall time into µs per delivery and deliveries per CPU-second', () => {
    // Half a core for 2 s is 1 CPU-second: 100,000 deliveries cost 10 µs each.
    expect(usPer(0.5, 2, 100_000)).toBeCloseTo(10);
    expect(deliveriesPerCpuSecond(0.5, 2, 100_000)).toBeCloseTo(100_000);
    expect(usPer(0.5, 2, 0)).toBeNull();
    expect(deliveriesPerCpuSecond(0, 2, 100)).toBeNull();
  });
});
