import { describe, expect, it } from 'vitest';
import { normalizeRedisTarget } from './redisTarget.js';

describe('normalizeRedisTarget', () => {
  it('canonicalizes host case, default port and db', () => {
    expect(normalizeRedisTarget('redis://R1.Example')).toBe('redis://r1.example:6379/0');
    expect(normalizeRedisTarget('rediss://r:7000/3')).toBe('rediss://r:7000/3');
  });

  it('refuses credentials, other schemes and junk', () => {
    for (const bad of ['redis://u:p@r:6379', 'redis://:p@r', 'http://r:6379', 'redis://r/abc', 'nonsense', 'redis://r?x=1']) {
      expect(normalizeRedisTarget(bad)).toBeNull();
    }
  });
});
