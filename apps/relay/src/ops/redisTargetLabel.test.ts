import { describe, expect, it } from 'vitest';
import { redisTargetLabel } from './redisTargetLabel.js';

describe('redisTargetLabel', () => {
  it('shows host:port/db and never the credentials', () => {
    expect(redisTargetLabel('redis://streams:6379/0')).toBe('streams:6379/0');
    expect(redisTargetLabel('rediss://r.example:6380/3')).toBe('r.example:6380/3');
    expect(redisTargetLabel('redis://user:hunter2@r.example')).toBe('r.example:6379/0');
    expect(redisTargetLabel('not a url')).toBe('unparsable-target');
  });

  it('names a Redis Cluster by its seed, apart from an instance on the same address', () => {
    expect(redisTargetLabel('redis-cluster://seed.example:7000')).toBe('cluster seed.example:7000');
    expect(redisTargetLabel('rediss-cluster://u:hunter2@Seed:7001')).toBe('cluster seed:7001');
  });
});
