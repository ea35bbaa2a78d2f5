import { describe, expect, it } from 'vitest';
import { CLUSTER_SLOTS, clusterKeySlot } from './clusterKeySlot.js';
import { pickKeysOnEveryPrimary } from './pickKeysOnEveryPrimary.js';

// Three primaries with the ranges `redis-cli --cluster create` gives them.
const owners = Array.from({ length: CLUSTER_SLOTS }, (_, slot) => (slot <= 5460 ? 'p1' : slot <= 10922 ? 'p2' : 'p3'));

describe('pickKeysOnEveryPrimary', () => {
  it('spreads the names round-robin over every primary, in slot order', () => {
    const keys = pickKeysOnEveryPrimary(owners, 'stream:', 7);
    expect(keys).toHaveLength(7);
    expect(new Set(keys).size).toBe(7);
    expect(keys.every((key) => /^stream:\d+$/.test(key))).toBe(true);
    expect(keys.map((key) => owners[clusterKeySlot(key)])).toEqual(['p1', 'p2', 'p3', 'p1', 'p2', 'p3', 'p1']);
  });

  it('refuses a count below the number of primaries, and a slot without one', () => {
    expect(() => pickKeysOnEveryPrimary(owners, 's', 2)).toThrow(/2 keys cannot cover 3 primaries/);
    const orphaned: (string | undefined)[] = [...owners];
    orphaned[42] = undefined;
    expect(() => pickKeysOnEveryPrimary(orphaned, 's', 3)).toThrow(/slot 42 has no live primary/);
  });
});

describe('clusterKeySlot', () => {
  it('matches the CRC16 reference value and hashes only a non-empty first hash tag', () => {
    // CRC16-XMODEM("123456789") = 0x31C3, the check value of the Redis Cluster spec.
    expect(clusterKeySlot('123456789')).toBe(0x31c3 % CLUSTER_SLOTS);
    expect(clusterKeySlot('{user1000}.following')).toBe(clusterKeySlot('user1000'));
    expect(clusterKeySlot('foo{}{bar}')).not.toBe(clusterKeySlot('bar'));
  });
});
