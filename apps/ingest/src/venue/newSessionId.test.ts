import { describe, expect, it } from 'vitest';
import { newSessionId } from './newSessionId.js';

describe('newSessionId', () => {
  it('is 23 characters of [0-9a-zA-Z], the ids MQTT 3.1.1 guarantees, carrying the shard index', () => {
    for (const index of [0, 7, 42, 99]) {
      const id = newSessionId(index);
      expect(id).toMatch(/^[0-9a-zA-Z]{1,23}$/);
      expect(id).toHaveLength(23);
      expect(id).toMatch(/^sg[0-9]{2}[0-9A-Za-z]{19}$/);
      expect(id.slice(2, 4)).toBe(String(index).padStart(2, '0'));
    }
  });

  it('never repeats, for one index or across them', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) ids.add(newSessionId(i % 5));
    expect(ids.size).toBe(20_000);
  });

  it('refuses an index that does not fit two digits', () => {
    for (const index of [-1, 100, 1.5, Number.NaN]) expect(() => newSessionId(index)).toThrow(RangeError);
  });
});
