import { describe, expect, it } from 'vitest';
import { tokenRefreshWindow } from '@streamgate/protocol';
import { ksUniform, prng, waitFor } from '@streamgate/testkit';
import { SessionHarness, sendFrame } from './testing/SessionHarness.js';

const SEED = 20_261_201;
const LIFETIME_S = 900;
const LEAD_S = 30;
const SKEW_S = 45;

/** When each `refresh_token` of `sid`s arrived, by the harness clock. */
function refreshTimes(h: SessionHarness, conns: ReturnType<SessionHarness['open']>['conn'][]): Map<string, number> {
  const out = new Map<string, number>();
  for (const conn of conns) {
    conn.records().forEach((f, i) => {
      if (f.op === 'refresh_token' && typeof f.sid === 'string') out.set(f.sid, conn.times[i] ?? Number.NaN);
    });
  }
  return out;
}

describe('Session refresh timing', () => {
  it('spreads the refresh_token of 1,000 tokens minted in one second uniformly over the window, none after exp − skew', async () => {
    const iat = Date.UTC(2026, 11, 1, 9, 0, 0) / 1000;
    const exp = iat + LIFETIME_S;
    const h = await SessionHarness.create({
      startMs: iat * 1000 + 400,
      refreshLeadSeconds: LEAD_S,
      clockSkewSeconds: SKEW_S,
      random: prng(SEED),
    });
    const sockets = Array.from({ length: 10 }, () => h.open());
    for (const [s, { session }] of sockets.entries()) {
      for (let i = 0; i < 100; i++) {
        const stream = `burst-${s}-${i}`;
        sendFrame(session, { op: 'subscribe', sid: stream, token: await h.tokens.sign({ stream, iat, exp }) });
      }
    }
    await waitFor(() => sockets.every(({ conn }) => conn.framesOf('live').length === 100), {
      timeoutMs: 30_000,
      message: 'not all 1,000 subscriptions went live',
    });

    h.clock.advanceToSync(exp * 1000 - 1);
    const times = [
      ...refreshTimes(
        h,
        sockets.map((s) => s.conn),
      ).values(),
    ];
    expect(times).toHaveLength(1_000);
    // The documented window: a third of the lifetime, closing max(lead, skew) before exp.
    const { startMs, endMs } = tokenRefreshWindow({ iatSeconds: iat, expSeconds: exp, leadSeconds: Math.max(LEAD_S, SKEW_S) });
    expect([startMs, endMs]).toEqual([(exp - SKEW_S - LIFETIME_S / 3) * 1000, (exp - SKEW_S) * 1000]);
    const ks = ksUniform(times, startMs, endMs);
    expect(ks, `KS D=${ks.d.toFixed(4)} critical ${ks.critical.toFixed(4)}`).toMatchObject({ pass: true });
    expect(times.filter((t) => t > (exp - SKEW_S) * 1000 || t < startMs)).toEqual([]);
    // Spread, not a burst: no second of the window holds more than a few percent of them.
    const perSecond = new Map<number, number>();
    for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThan(30);
  });

  it('gives a token received late in its window the rest of the window, and a refreshed token a new one', async () => {
    const iat = Date.UTC(2026, 11, 1, 9, 0, 0) / 1000;
    const exp = iat + 600;
    // Received 500 s into a 600 s life: past the window's start (exp − 30 − 200 s = iat + 370 s).
    const h = await SessionHarness.create({ startMs: (iat + 500) * 1000, refreshLeadSeconds: 30, clockSkewSeconds: 0, random: () => 0.5 });
    const { conn, session } = h.open();
    sendFrame(session, { op: 'subscribe', sid: 'late', token: await h.tokens.sign({ stream: 'late', iat, exp }) });
    await waitFor(() => conn.framesOf('live').length === 1, { timeoutMs: 5_000, message: 'never live' });
    h.clock.advanceToSync((exp - 30) * 1000);
    expect(refreshTimes(h, [conn]).get('late')).toBe((iat + 500 + 35) * 1000);

    const iat2 = iat + 560;
    sendFrame(session, { op: 'refresh', sid: 'late', token: await h.tokens.sign({ stream: 'late', iat: iat2, exp: iat2 + 600 }) });
    await waitFor(() => conn.framesOf('refreshed').length === 1, { timeoutMs: 5_000, message: 'never refreshed' });
    h.clock.advanceToSync((iat2 + 600) * 1000 - 1);
    const second = conn
      .records()
      .map((f, i) => ({ f, t: conn.times[i] }))
      .filter(({ f }) => f.op === 'refresh_token');
    // Midway (random 0.5) through [exp2 − 30 − 200, exp2 − 30].
    expect(second.map(({ t }) => t)).toEqual([(iat + 535) * 1000, (iat2 + 600 - 30 - 100) * 1000]);
    expect(conn.framesOf('unsubscribed')).toEqual([]);
  });

  it('sends the refresh_token of a token past its window after the subscribed, even when the first read is slow', async () => {
    const iat = Date.UTC(2026, 11, 1, 9, 0, 0) / 1000;
    const exp = iat + 600;
    // Received 590 s into a 600 s life: the window (ending at exp − 30 s) is over, so it is due at once.
    const h = await SessionHarness.create({ startMs: (iat + 590) * 1000, refreshLeadSeconds: 30, clockSkewSeconds: 0 });
    const { conn, session } = h.open();
    h.source.appendData('slow', { v: 1 });
    const release = h.source.holdReads();
    const inspected = h.source.reads.inspect;
    sendFrame(session, { op: 'subscribe', sid: 'slow', token: await h.tokens.sign({ stream: 'slow', iat, exp }) });
    await waitFor(() => h.source.reads.inspect > inspected, { timeoutMs: 5_000, message: 'the hub never read the stream' });
    h.clock.advanceToSync((iat + 591) * 1000);
    expect(conn.framesOf('refresh_token')).toEqual([]);
    release();
    await waitFor(() => conn.framesOf('refresh_token').length === 1, { timeoutMs: 5_000, message: 'no refresh_token after subscribed' });
    const ops = conn.records().map((f) => f.op);
    expect(ops.indexOf('subscribed')).toBeGreaterThanOrEqual(0);
    expect(ops.indexOf('subscribed')).toBeLessThan(ops.indexOf('refresh_token'));
    expect(conn.framesOf('refresh_token')).toEqual([{ op: 'refresh_token', sid: 'slow', exp }]);
  });
  it('answers a refresh sent right behind its subscribe only after the subscribed, even when the first read is slow', async () => {
    const iat = Date.UTC(2026, 11, 1, 9, 0, 0) / 1000;
    const h = await SessionHarness.create({ startMs: (iat + 10) * 1000 });
    const { conn, session } = h.open();
    h.source.appendData('slow', { v: 1 });
    const release = h.source.holdReads();
    const inspected = h.source.reads.inspect;
    sendFrame(session, { op: 'subscribe', sid: 'slow', token: await h.tokens.sign({ stream: 'slow', iat, exp: iat + 600 }) });
    sendFrame(session, { op: 'refresh', sid: 'slow', token: await h.tokens.sign({ stream: 'slow', iat: iat + 5, exp: iat + 1200 }) });
    await waitFor(() => h.source.reads.inspect > inspected, { timeoutMs: 5_000, message: 'the hub never read the stream' });
    // The refresh's own token check has had every chance to finish: still nothing for this sid.
    await h.tokens.sign({ stream: 'other', iat, exp: iat + 600 });
    expect(conn.framesOf('refreshed')).toEqual([]);
    release();
    await waitFor(() => conn.framesOf('refreshed').length === 1, { timeoutMs: 5_000, message: 'the refresh was never answered' });
    const ops = conn.records().map((f) => f.op);
    expect(ops.indexOf('subscribed')).toBeGreaterThanOrEqual(0);
    expect(ops.indexOf('subscribed')).toBeLessThan(ops.indexOf('refreshed'));
    expect(conn.framesOf('refreshed')).toEqual([{ op: 'refreshed', sid: 'slow', exp: iat + 1200 }]);
  });
});
