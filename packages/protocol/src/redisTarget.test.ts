import { describe, expect, it } from 'vitest';
import { normalizeRedisTarget, parseRedisTarget } from './redisTarget.js';

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

describe('cluster targets', () => {
  it('name a cluster by one seed, with db 0 only', () => {
    expect(normalizeRedisTarget('redis-cluster://Seed.Example:7000')).toBe('redis-cluster://seed.example:7000');
    expect(normalizeRedisTarget('rediss-cluster://seed/0')).toBe('rediss-cluster://seed:6379');
    expect(normalizeRedisTarget('redis-cluster://seed:7000/1')).toBeNull();
    expect(normalizeRedisTarget('redis-cluster://u:p@seed:7000')).toBeNull();
  });

  it('parse to the address to connect to', () => {
    expect(parseRedisTarget('redis-cluster://seed:7000')).toEqual({ kind: 'cluster', tls: false, host: 'seed', port: 7000 });
    expect(parseRedisTarget('rediss://r:7001/4')).toEqual({ kind: 'standalone', tls: true, host: 'r', port: 7001, db: 4 });
  });
});

describe('addresses', () => {
  it('keep an IPv6 host bracketed in the normalized form and the parsed host', () => {
    expect(normalizeRedisTarget('redis://[::1]:6390')).toBe('redis://[::1]:6390/0');
    expect(parseRedisTarget('redis-cluster://[::1]:7000')).toEqual({ kind: 'cluster', tls: false, host: '[::1]', port: 7000 });
  });

  it('refuse port 0, which no Redis can be reached on', () => {
    expect(normalizeRedisTarget('redis://r:0')).toBeNull();
    expect(normalizeRedisTarget('redis-cluster://r:0')).toBeNull();
    expect(normalizeRedisTarget('redis://r:00/1')).toBeNull();
  });
});
