import { describe, expect, it } from 'vitest';
import { RejectionList } from './RejectionList.js';

function setup(defaultTtlMs = 1_000) {
  let t = 10_000;
  const list = new RejectionList(defaultTtlMs, () => t);
  return { list, advance: (ms: number) => (t += ms), now: () => t };
}

describe('RejectionList', () => {
  it('holds a refusal for its TTL, then lets go', () => {
    const { list, advance } = setup();
    list.add(['AAA', 'BBB']);
    expect(list.has('AAA')).toBe(true);
    expect(list.has('CCC')).toBe(false);
    expect(list.active()).toEqual(new Set(['AAA', 'BBB']));
    advance(999);
    expect(list.has('AAA')).toBe(true);
    advance(1);
    expect(list.has('AAA')).toBe(false);
    expect(list.active()).toEqual(new Set());
    // Expired but not yet pruned: still held, reported as due.
    expect(list.size).toBe(2);
    expect(list.prune().sort()).toEqual(['AAA', 'BBB']);
    expect(list.size).toBe(0);
    expect(list.prune()).toEqual([]);
  });

  it('uses a per-call TTL when given, and prunes only what is due', () => {
    const { list, advance, now } = setup();
    list.add(['SHORT'], 100);
    list.add(['LONG']);
    expect(list.nextExpiry()).toBe(now() + 100);
    advance(100);
    expect(list.nextExpiry()).toBe(now());
    expect(list.prune()).toEqual(['SHORT']);
    expect(list.nextExpiry()).toBe(now() + 900);
    expect(list.active()).toEqual(new Set(['LONG']));
  });

  it('a repeated refusal extends the expiry but never shortens it', () => {
    const { list, advance, now } = setup();
    list.add(['AAA'], 5_000);
    const firstUntil = now() + 5_000;
    advance(1_000);
    list.add(['AAA'], 100);
    expect(list.nextExpiry()).toBe(firstUntil);
    advance(4_500);
    list.add(['AAA']);
    expect(list.nextExpiry()).toBe(now() + 1_000);
  });

  it('is empty-safe and refuses a non-positive TTL', () => {
    const { list } = setup();
    expect(list.nextExpiry()).toBeUndefined();
    expect(list.active()).toEqual(new Set());
    expect(() => list.add(['AAA'], 0)).toThrow(RangeError);
    expect(() => new RejectionList(0)).toThrow(RangeError);
  });
});
