import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVOCATIONS_CHANNEL, REVOCATIONS_KEY, parseRevocationRecord } from '@streamgate/protocol';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { createRevoker } from './createRevoker.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

describe('createRevoker', () => {
  it('refuses option numbers that would record a revocation already lapsed, or never', () => {
    for (const [options, message] of [
      [{ maxTokenLifetimeSeconds: -1000 }, /maxTokenLifetimeSeconds must be an integer from 1 to 86400, got -1000/],
      [{ maxTokenLifetimeSeconds: Number.NaN }, /maxTokenLifetimeSeconds must be an integer/],
      [{ maxTokenLifetimeSeconds: 1e9 }, /maxTokenLifetimeSeconds must be an integer from 1 to 86400/],
      [{ clockSkewSeconds: 'x' as unknown as number }, /clockSkewSeconds must be an integer from 0 to 300, got x/],
      [{ timeoutMs: 0 }, /timeoutMs must be an integer from 1/],
    ] as const) {
      expect(() => createRevoker({ targets: redis.url, ...options })).toThrow(RangeError);
      expect(() => createRevoker({ targets: redis.url, ...options })).toThrow(message);
    }
  });

  it('answers closed after close(), opening no connection that would keep the process alive', async () => {
    const revoker = createRevoker({ targets: redis.url, maxTokenLifetimeSeconds: 60 });
    const first = await revoker.revoke({ subject: 'before-close' });
    expect(first.ok).toBe(true);
    await revoker.close();
    const revokerConnections = async (): Promise<number> =>
      String(await redis.client().call('CLIENT', 'LIST'))
        .split('\n')
        .filter((line) => line.includes('streamgate-revoker')).length;
    const clientsBefore = await revokerConnections();
    expect(await revoker.revoke({ subject: 'after-close' })).toEqual({
      ok: false,
      error: { code: 'closed', retryable: false, message: 'the revoker is closed' },
    });
    const clientsAfter = await revokerConnections();
    expect(clientsAfter).toBe(clientsBefore);
    // The other tests count the set's records.
    await redis.client().del(REVOCATIONS_KEY);
  });

  it('records the revocation in the set, publishes it, and resolves once tokens issued after it carry a later iat', async () => {
    const subscriber = redis.client();
    const published: string[] = [];
    await subscriber.subscribe(REVOCATIONS_CHANNEL);
    subscriber.on('message', (_channel: string, text: string) => published.push(text));
    const revoker = createRevoker({ targets: redis.url, maxTokenLifetimeSeconds: 300, clockSkewSeconds: 30 });
    try {
      const calledAt = Date.now();
      const result = await revoker.revoke({ subject: 'alice', stream: 'demo:a' });
      if (!result.ok) throw new Error(result.error.message);
      expect(result.before).toBe(Math.floor(calledAt / 1000) + 1);
      expect(Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(result.before);
      expect(result.expiresAt).toBe((result.before + 330) * 1000);
      const members = await redis.client().zrange(REVOCATIONS_KEY, '0', '-1', 'WITHSCORES');
      expect(members).toHaveLength(2);
      const parsed = parseRevocationRecord(members[0] ?? '');
      expect(parsed).toEqual({ ok: true, record: { v: 1, sub: 'alice', stream: 'demo:a', before: result.before, exp: result.expiresAt } });
      expect(Number(members[1])).toBe(result.expiresAt);
      const ttl = await redis.client().pttl(REVOCATIONS_KEY);
      expect(ttl).toBeGreaterThan(300_000);
      await expect.poll(() => published).toEqual([members[0]]);
    } finally {
      await revoker.close();
      subscriber.disconnect();
    }
  });

  it('never moves the set expiry earlier: a shorter-lived issuer keeps the longer records', async () => {
    const client = redis.client();
    await client.del(REVOCATIONS_KEY);
    const long = createRevoker({ targets: redis.url, maxTokenLifetimeSeconds: 3_600, clockSkewSeconds: 0 });
    const short = createRevoker({ targets: redis.url, maxTokenLifetimeSeconds: 1, clockSkewSeconds: 0 });
    try {
      const first = await long.revoke({ subject: 'away' });
      if (!first.ok) throw new Error(first.error.message);
      const second = await short.revoke({ subject: 'brief' });
      if (!second.ok) throw new Error(second.error.message);
      expect(await client.pexpiretime(REVOCATIONS_KEY)).toBe(first.expiresAt);
      expect(await client.zscore(REVOCATIONS_KEY, JSON.stringify({ v: 1, sub: 'away', before: first.before, exp: first.expiresAt }))).toBe(
        String(first.expiresAt),
      );
    } finally {
      await long.close();
      await short.close();
      client.disconnect();
    }
  });

  it('refuses a revocation that names neither a subject nor a valid stream, with a typed error', async () => {
    const revoker = createRevoker({ targets: redis.url });
    try {
      expect(await revoker.revoke({} as { subject: string })).toMatchObject({
        ok: false,
        error: { code: 'revoke_invalid', retryable: false },
      });
      const bad = await revoker.revoke({ stream: 'not a stream name!' });
      expect(bad.ok ? '' : bad.error.message).toMatch(/^stream:/);
    } finally {
      await revoker.close();
    }
  });

  it('reports the targets that did not record it as a retryable failure', async () => {
    const revoker = createRevoker({ targets: ['redis://127.0.0.1:1/0', redis.url], timeoutMs: 1_000 });
    try {
      const result = await revoker.revoke({ subject: 'bob' });
      expect(result).toMatchObject({
        ok: false,
        error: { code: 'revoke_failed', retryable: true, failedTargets: ['redis://127.0.0.1:1/0'] },
      });
    } finally {
      await revoker.close();
    }
  });
});
