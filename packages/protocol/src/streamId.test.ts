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

  it('accepts only canonical ids', () => {
    expect(isStreamId('1-0')).toBe(true);
    expect(isStreamId('18446744073709551615-18446744073709551615')).toBe(true);
    for (const bad of ['1', '01-0', '1-01', '-1-0', '1-0 ', '$', '*', '1-a', '18446744073709551616-0', '0-99999999999999999999'])
      expect(isStreamId(bad)).toBe(false);
  });
});
