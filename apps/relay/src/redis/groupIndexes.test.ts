import { describe, expect, it } from 'vitest';
import { keySlot } from '@streamgate/redis';
import { groupIndexes } from './groupIndexes.js';

describe('groupIndexes', () => {
  it('groups positions by slot, in first-seen order, so a per-slot XREAD never names keys of two slots', () => {
    const keys = ['{t1}:a', 'x', '{t1}:b', 'y', '{t1}:c', 'x'];
    const groups = groupIndexes(keys, (key) => keySlot(key));
    expect([...groups.values()]).toEqual([[0, 2, 4], [1, 5], [3]]);
    for (const indexes of groups.values()) expect(new Set(indexes.map((i) => keySlot(keys[i] ?? ''))).size).toBe(1);
  });

  it('gives nothing for nothing', () => {
    expect(groupIndexes([], () => 0).size).toBe(0);
  });
});
