import { describe, expect, it } from 'vitest';
import { maskRedisCredentials, redisTargetItemProblem } from './redisTargetItemProblem.js';

describe('redisTargetItemProblem', () => {
  it('accepts a target without credentials', () => {
    expect(redisTargetItemProblem('redis://r0:6379/0', 'fix it')).toBeNull();
    expect(redisTargetItemProblem('redis-cluster://seed:7000', 'fix it')).toBeNull();
  });

  it('shows a refused item with its credentials masked, then the fix', () => {
    expect(redisTargetItemProblem('redis://u:pw@r1', 'list them so')).toBe(
      '"redis://<credentials>@r1" is not a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL without credentials; list them so',
    );
    expect(redisTargetItemProblem('http://r1', 'x')).toMatch(/^"http:\/\/r1" is not/);
  });

  it('masks passwords holding / or @, and credentials without a scheme', () => {
    for (const item of ['redis://u:p/w@r1:6379', 'redis://u:p@ss@r1', 'u:pw@r1', 'redis://:pw@r1/0']) {
      const message = redisTargetItemProblem(item, 'x') ?? '';
      expect(message).toContain('<credentials>@r1');
      expect(message).not.toMatch(/pw|p\/w|p@ss/);
    }
    expect(maskRedisCredentials('redis://r1:6379/0')).toBe('redis://r1:6379/0');
  });
});
