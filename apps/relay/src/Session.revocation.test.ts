import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { RevocationList } from './revocation/RevocationList.js';
import { RevokingVerifier } from './revocation/RevokingVerifier.js';
import { Session } from './Session.js';
import { FakeConnection } from './testing/FakeConnection.js';
import { SessionHarness, sendFrame as send } from './testing/SessionHarness.js';

async function answer(conn: FakeConnection, sid: string, ops: string[]): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(
    () => {
      found = conn.records().find((f) => f.sid === sid && ops.includes(String(f.op)));
      return found !== undefined;
    },
    { timeoutMs: 5_000, message: `no ${ops.join('/')} for ${sid}; got ${conn.texts.join(' ')}` },
  );
  return found ?? {};
}

describe('Session and revocation', () => {
  it('ends covered subscriptions with unsubscribed revoked, leaves the others, and refuses covered tokens', async () => {
    const h = await SessionHarness.create();
    const revocations = new RevocationList(h.clock, 30_000);
    const deps = { ...h.deps, verifier: new RevokingVerifier(h.verifier, revocations) };
    const conn = new FakeConnection(h.publisher, () => h.clock.now());
    const session = new Session(conn, deps);
    conn.onClose(() => session.onClose());
    session.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    send(session, { op: 'subscribe', sid: 'a', token: await h.tokens.sign({ stream: 'demo:a', sub: 'alice', iat: nowS - 10 }) });
    send(session, { op: 'subscribe', sid: 'b', token: await h.tokens.sign({ stream: 'demo:b', sub: 'bob', iat: nowS - 10 }) });
    expect(await answer(conn, 'a', ['subscribed'])).toMatchObject({ op: 'subscribed' });
    expect(await answer(conn, 'b', ['subscribed'])).toMatchObject({ op: 'subscribed' });

    const record = { v: 1 as const, sub: 'alice', before: nowS, exp: h.clock.now() + 600_000 };
    expect(revocations.add(record)).toBe(true);
    expect(session.revoke(record)).toBe(1);
    expect(await answer(conn, 'a', ['unsubscribed'])).toEqual({ op: 'unsubscribed', sid: 'a', reason: 'revoked' });
    expect(conn.records().filter((f) => f.op === 'unsubscribed' && f.sid === 'b')).toEqual([]);

    // The old token again: refused. A token issued at the cutoff: accepted.
    send(session, { op: 'subscribe', sid: 'a2', token: await h.tokens.sign({ stream: 'demo:a', sub: 'alice', iat: nowS - 10 }) });
    expect(await answer(conn, 'a2', ['error', 'subscribed'])).toMatchObject({ op: 'error', code: 'revoked', retryable: false });
    send(session, { op: 'subscribe', sid: 'a3', token: await h.tokens.sign({ stream: 'demo:a', sub: 'alice', iat: nowS }) });
    expect(await answer(conn, 'a3', ['error', 'subscribed'])).toMatchObject({ op: 'subscribed' });
    // The subscription holding the newer token is not covered by the same record.
    expect(session.revoke(record)).toBe(0);
  });

  it('refuses a refresh with a covered token', async () => {
    const h = await SessionHarness.create();
    const revocations = new RevocationList(h.clock, 30_000);
    const conn = new FakeConnection(h.publisher, () => h.clock.now());
    const session = new Session(conn, { ...h.deps, verifier: new RevokingVerifier(h.verifier, revocations) });
    session.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    send(session, { op: 'subscribe', sid: 'a', token: await h.tokens.sign({ stream: 'demo:a', sub: 'alice', iat: nowS }) });
    await answer(conn, 'a', ['subscribed']);
    revocations.add({ v: 1, stream: 'demo:a', before: nowS, exp: h.clock.now() + 600_000 });
    send(session, { op: 'refresh', sid: 'a', token: await h.tokens.sign({ stream: 'demo:a', sub: 'alice', iat: nowS - 5 }) });
    expect(await answer(conn, 'a', ['error', 'refreshed'])).toMatchObject({ op: 'error', code: 'revoked' });
  });

  it('accepts the client pong and announces the ping interval in welcome', async () => {
    const h = await SessionHarness.create();
    const conn = new FakeConnection(h.publisher, () => h.clock.now());
    const session = new Session(conn, { ...h.deps, pingIntervalMs: 25_000 });
    session.open();
    expect(conn.records()[0]).toMatchObject({ op: 'welcome', pingIntervalMs: 25_000 });
    send(session, { op: 'pong' });
    send(session, { op: 'pong', extra: 1 });
    expect(conn.records().slice(1)).toMatchObject([{ op: 'error', code: 'frame_invalid' }]);
  });
});
