import { describe, expect, it } from 'vitest';
import { compareStreamIds, isStreamId } from './streamId.js';

describe('compareStreamIds', () => {
  it('orders by milliseconds, then sequence, as integers not strings', () => {
    expect(compareStreamIds('9-0', '10-0')).toBeLessThan(0);
    expect(compareStreamIds('10-2', '10-10')).toBeLessThan(0);
    expect(compareStreamIds('10-10', '10-2')).toBeGreaterThan(0);
    expect(compareStreamIds('1700000000000-5', '1700000000000-5')).toBe(0);
    expect(compareStreamIds('18446744073709551615-0', '9007199254740993-0')).toBeGreaterThan(0);
  });

  it('agrees with integer order on ids of every part length', () => {
    const parts = ['0', '1', '9', '10', '99', '100', '1764650000000', '1764650000001', '18446744073709551615'];
    const ids = parts.flatMap((ms) => parts.map((seq) => `${ms}-${seq}`));
    const key = (id: string) => id.split('-').map(BigInt) as [bigint, bigint];
    for (const a of ids)
      for (const b of ids) {
        const [ma, sa] = key(a);
        const [mb, sb] = key(b);
        const expected = ma !== mb ? (ma < mb ? -1 : 1) : sa !== sb ? (sa < sb ? -1 : 1) : 0;
        expect(Math.sign(compareStreamIds(a, b)), `${a} vs ${b}`).toBe(expected);
      }
  });

  it('accepts only canonical ids', () => {
    expect(isStreamId('1-0')).toBe(true);
    expect(isStreamId('18446744073709551615-18446744073709551615')).toBe(true);
    for (const bad of ['1', '01-0', '1-01', '-1-0', '1-0 ', '$', '*', '1-a', '18446744073709551616-0', '0-99999999999999999999'])
      expect(isStreamId(bad)).toBe(false);
  });
});
