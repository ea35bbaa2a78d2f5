import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { RevocationList } from './RevocationList.js';

const T0 = 1_700_000_000_000;
const S0 = T0 / 1000;

describe('RevocationList', () => {
  it('refuses tokens issued before the cutoff, by subject, by stream and by both', () => {
    const list = new RevocationList(new ManualClock(T0), 5_000);
    const exp = T0 + 3_600_000;
    list.add({ v: 1, sub: 'alice', before: S0, exp });
    list.add({ v: 1, stream: 'demo:b', before: S0, exp });
    list.add({ v: 1, sub: 'carol', stream: 'demo:c', before: S0, exp });
    expect(list.refuses({ sub: 'alice', stream: 'demo:x', iat: S0 - 1 })).toBe(true);
    expect(list.refuses({ sub: 'alice', stream: 'demo:x', iat: S0 })).toBe(false);
    expect(list.refuses({ sub: 'bob', stream: 'demo:b', iat: S0 - 1 })).toBe(true);
    expect(list.refuses({ sub: 'bob', stream: 'demo:x', iat: S0 - 1 })).toBe(false);
    expect(list.refuses({ sub: 'carol', stream: 'demo:c', iat: S0 - 1 })).toBe(true);
    expect(list.refuses({ sub: 'carol', stream: 'demo:d', iat: S0 - 1 })).toBe(false);
    expect(list.refuses({ sub: 'dave', stream: 'demo:c', iat: S0 - 1 })).toBe(false);
  });

  it('keeps the latest cutoff per key and reports repeats as no change', () => {
    const list = new RevocationList(new ManualClock(T0), 0);
    const exp = T0 + 3_600_000;
    expect(list.add({ v: 1, sub: 'alice', before: S0 + 10, exp })).toBe(true);
    expect(list.add({ v: 1, sub: 'alice', before: S0, exp })).toBe(false);
    expect(list.refuses({ sub: 'alice', stream: 'demo:a', iat: S0 + 5 })).toBe(true);
    expect(list.size).toBe(1);
  });

  it('forgets a record once its expiry plus the skew has passed: memory is bounded by one token lifetime', () => {
    const clock = new ManualClock(T0);
    const list = new RevocationList(clock, 5_000);
    for (let i = 0; i < 1_000; i++) list.add({ v: 1, sub: `user-${i}`, before: S0, exp: T0 + 60_000 });
    expect(list.size).toBe(1_000);
    clock.advanceSync(64_999);
    expect(list.refuses({ sub: 'user-1', stream: 'demo:a', iat: S0 - 1 })).toBe(true);
    clock.advanceSync(1);
    expect(list.refuses({ sub: 'user-1', stream: 'demo:a', iat: S0 - 1 })).toBe(false);
    // Counted as held only while in force, without waiting for another record to arrive.
    expect(list.size).toBe(0);
    list.add({ v: 1, sub: 'late', before: S0 + 100, exp: T0 + 3_600_000 });
    expect(list.size).toBe(1);
    expect(list.add({ v: 1, sub: 'stale', before: S0, exp: T0 })).toBe(false);
  });

  it('matches a record against a live subscription', () => {
    const record = { v: 1 as const, sub: 'alice', before: S0, exp: T0 + 1 };
    expect(RevocationList.matches(record, { sub: 'alice', stream: 'demo:a', iat: S0 - 1 })).toBe(true);
    expect(RevocationList.matches(record, { sub: 'alice', stream: 'demo:a', iat: S0 })).toBe(false);
    expect(RevocationList.matches(record, { sub: 'bob', stream: 'demo:a', iat: S0 - 1 })).toBe(false);
  });
});
