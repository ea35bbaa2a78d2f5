import { describe, expect, it } from 'vitest';
import { TokenBucket } from './TokenBucket.js';

describe('TokenBucket', () => {
  it('starts full, refuses when empty and refills at perSecond up to burst', () => {
    let now = 0;
    const bucket = new TokenBucket({ perSecond: 2, burst: 3 }, () => now);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
    now = 499;
    expect(bucket.tryTake()).toBe(false);
    now = 500;
    expect(bucket.tryTake()).toBe(true);
    now = 60_000;
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
  });

  it('rejects a limit that could never admit anything', () => {
    expect(() => new TokenBucket({ perSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => new TokenBucket({ perSecond: 1, burst: 0.5 })).toThrow(RangeError);
  });
});
