import { describe, expect, it } from 'vitest';
import { relayClaimsSchema } from './claims.js';
import { normalizeStreamTarget, streamTargetSchema } from './streamTarget.js';

describe('streamTargetSchema', () => {
  it('normalizes Redis and JetStream targets alike', () => {
    expect(streamTargetSchema.parse('redis://R:6379')).toBe('redis://r:6379/0');
    expect(streamTargetSchema.parse('nats://N1,n2:4223')).toBe('nats://n1:4222,n2:4223/STREAMGATE');
    expect(normalizeStreamTarget('redis-cluster://c:7000')).toBe('redis-cluster://c:7000');
  });

  it('refuses either kind with credentials, and anything else, naming both forms', () => {
    for (const raw of ['nats://u:p@n1', 'redis://u:p@r:6379', 'http://r', 'nats://n1/a.b']) {
      const parsed = streamTargetSchema.safeParse(raw);
      expect(parsed.success, raw).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/redis:\/\/.*nats:\/\//);
    }
  });

  it('is what a token’s redis claim accepts', () => {
    const claims = { iss: 'i', aud: 'a', sub: 's', exp: 2, iat: 1, jti: 'j', ver: 1, stream: 'task:1' };
    expect(relayClaimsSchema.parse({ ...claims, redis: 'nats://n1/TASKS' }).redis).toBe('nats://n1:4222/TASKS');
    expect(relayClaimsSchema.parse({ ...claims, redis: 'redis://r' }).redis).toBe('redis://r:6379/0');
  });
});
