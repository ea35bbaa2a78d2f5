import { describe, expect, it } from 'vitest';
import { keySlot } from './keySlot.js';
import { streamSlotTag } from './streamSlotTag.js';

describe('streamSlotTag', () => {
  it('puts a companion key in the stream’s slot, with or without a hash tag in the name', () => {
    for (const stream of ['orders:42', '{tenant7}:orders:42', 'a{b', 'x{y}z{w}']) {
      const tag = streamSlotTag(stream);
      expect(tag.ok).toBe(true);
      if (tag.ok) expect(keySlot(`streamgate:ingest:${tag.tag}${stream}:fence`)).toBe(keySlot(stream));
    }
  });

  it('refuses a stream hashed whole whose name holds a }', () => {
    for (const stream of ['a}b', 'x{}y']) {
      const tag = streamSlotTag(stream);
      expect(tag.ok).toBe(false);
      if (!tag.ok) expect(tag.reason).toMatch(/hash tag/);
    }
  });
});
