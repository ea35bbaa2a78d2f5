import { describe, expect, it } from 'vitest';
import { redisTargetLabel } from './redisTargetLabel.js';

describe('redisTargetLabel', () => {
  it('shows host:port/db and never the credentials', () => {
    expect(redisTargetLabel('redis://streams:6379/0')).toBe('streams:6379/0');
    expect(redisTargetLabel('rediss://r.example:6380/3')).toBe('r.example:6380/3');
    expect(redisTargetLabel('redis://user:hunter2@r.example')).toBe('r.example:6379/0');
    expect(redisTargetLabel('not a url')).toBe('unparsable-target');
  });
});
