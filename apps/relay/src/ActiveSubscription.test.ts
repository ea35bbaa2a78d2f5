import { describe, expect, it } from 'vitest';
import type { RelayClaims } from '@streamgate/protocol';
import { ActiveSubscription } from './ActiveSubscription.js';
import { DeadlineQueue } from './DeadlineQueue.js';
import { FakeConnection } from './testing/FakeConnection.js';
import { SessionHarness } from './testing/SessionHarness.js';
import { TokenTimers } from './TokenTimers.js';
import { TestTokens } from './testing/TestTokens.js';

const claims: RelayClaims = {
  iss: 'issuer',
  aud: 'relay',
  sub: 'user-1',
  exp: 2_000_000_000,
  iat: 1_000,
  jti: 'j1',
  ver: 1,
  stream: 'prices:btc',
  redis: TestTokens.REDIS,
};

async function open(sid = 'a'): Promise<{ h: SessionHarness; sub: ActiveSubscription }> {
  const h = await SessionHarness.create();
  const timers = new TokenTimers(
    { deadlines: DeadlineQueue.of(h.clock), random: () => 0.5, refreshLeadSeconds: 60, clockSkewSeconds: 5 },
    sid,
    { refreshDue: () => undefined, expired: () => undefined },
  );
  const hubSub = h.hub.subscribe(new FakeConnection(), sid, claims.stream, undefined, claims.exp, () => undefined);
  return { h, sub: new ActiveSubscription(sid, claims, h.hub, hubSub, timers) };
}

describe('ActiveSubscription', () => {
  it('holds the grant of its token', async () => {
    const { sub } = await open();
    expect({ sid: sub.sid, subject: sub.subject, stream: sub.stream, target: sub.target }).toEqual({
      sid: 'a',
      subject: 'user-1',
      stream: 'prices:btc',
      target: TestTokens.REDIS,
    });
  });

  it('is covered by a revocation only while its token is older than the record', async () => {
    const { sub } = await open();
    const record = { v: 1 as const, sub: 'user-1', before: 1_200, exp: Date.now() + 60_000 };
    expect(sub.coveredBy(record)).toBe(true);
    expect(sub.coveredBy({ ...record, sub: 'user-2' })).toBe(false);
    sub.renew({ ...claims, iat: 1_300 });
    expect(sub.coveredBy(record)).toBe(false);
  });

  it('releases its reader from the hub', async () => {
    const { h, sub } = await open();
    expect(h.hub.subscriberCount).toBe(1);
    sub.release();
    expect(h.hub.subscriberCount).toBe(0);
  });
});
