import { describe, expect, it } from 'vitest';
import { splitRedisUrl } from './splitRedisUrl.js';

describe('splitRedisUrl', () => {
  it('splits a URL into its normalized target and its decoded credentials', () => {
    expect(splitRedisUrl('rediss://ing%40est:p%3Aw@R:6380/2')).toEqual({
      target: 'rediss://r:6380/2',
      username: 'ing@est',
      password: 'p:w',
    });
    expect(splitRedisUrl('redis-cluster://:pw@seed:7000')).toEqual({
      target: 'redis-cluster://seed:7000',
      username: undefined,
      password: 'pw',
    });
    expect(splitRedisUrl('redis://r')).toEqual({ target: 'redis://r:6379/0', username: undefined, password: undefined });
  });

  it('refuses what is not a target, and malformed percent-encoding, without throwing', () => {
    for (const bad of ['http://u:p@r', 'nonsense', 'redis://r/abc', 'redis://us%zz:p@h', 'redis://u:p%E0%A4%A@h']) {
      expect(splitRedisUrl(bad)).toBeNull();
    }
  });
});
