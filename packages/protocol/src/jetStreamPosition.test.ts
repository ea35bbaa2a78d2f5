import { describe, expect, it } from 'vitest';
import { compareStreamIds } from './streamId.js';
import { jetStreamId, jetStreamSequence } from './jetStreamPosition.js';

describe('JetStream positions', () => {
  it('writes sequences as ids that compare in sequence order', () => {
    expect(jetStreamId(0)).toBe('0-0');
    expect(jetStreamId(1)).toBe('0-1');
    expect(compareStreamIds(jetStreamId(9), jetStreamId(10))).toBe(-1);
    expect(jetStreamSequence(jetStreamId(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reads no sequence from a Redis id or one beyond 2^53 − 1', () => {
    expect(jetStreamSequence('1700000000000-0')).toBeNull();
    expect(jetStreamSequence('0-9007199254740993')).toBeNull();
    expect(() => jetStreamId(-1)).toThrow(RangeError);
    expect(() => jetStreamId(1.5)).toThrow(RangeError);
  });
});
