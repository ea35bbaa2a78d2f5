import { describe, expect, it } from 'vitest';
import { placeStream, placementScore } from './placeStream.js';

const four = ['redis://r0:6379/0', 'redis://r1:6379/0', 'redis://r2:6379/0', 'redis://r3:6379/0'];
const names = Array.from({ length: 10_000 }, (_, i) => `task:${i}`);

describe('placeStream', () => {
  it('scores by the first 8 bytes of SHA-256(target NUL stream), big-endian', () => {
    // sha256("redis://r0:6379/0\0task:0"), computed independently with `printf 'redis://r0:6379/0\0task:0' | sha256sum`.
    expect(placementScore('redis://r0:6379/0', 'task:0').toString(16).padStart(16, '0')).toBe(EXPECTED_R0_TASK0);
  });

  it('does not depend on the order of the list', () => {
    const reversed = [...four].reverse();
    for (const name of names.slice(0, 500)) expect(placeStream(name, reversed)).toBe(placeStream(name, four));
  });

  it('spreads streams evenly and moves only the new target’s share when one is added', () => {
    const before = new Map(names.map((n) => [n, placeStream(n, four)]));
    const counts = new Map<string, number>();
    for (const t of before.values()) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const t of four) expect(counts.get(t)).toBeGreaterThan(2_300);
    const five = [...four, 'redis://r4:6379/0'];
    let moved = 0;
    for (const n of names) {
      const after = placeStream(n, five);
      if (after !== before.get(n)) {
        moved += 1;
        // A stream only ever moves to the new target.
        expect(after).toBe('redis://r4:6379/0');
      }
    }
    expect(moved / names.length).toBeGreaterThan(0.17);
    expect(moved / names.length).toBeLessThan(0.23);
  });

  it('refuses an empty list', () => {
    expect(() => placeStream('a', [])).toThrow(RangeError);
  });
});
const EXPECTED_R0_TASK0 = '41f262ea37e08259';
