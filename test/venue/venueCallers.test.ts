import { describe, expect, it } from 'vitest';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

const CALL_TIMEOUT_MS = 1_500;

describe('venue callers', () => {
  it('answers every caller parked on a connecting session before its timeout, then subscribes on CONNACK', async () => {
    await using h = await startVenueHarness({ sim: {}, feed: { callTimeoutMs: CALL_TIMEOUT_MS, connectTimeoutMs: 5_000 } });
    h.sim.setConnackDelay(2_500);
    const started = Date.now();
    const [a, b] = await withDeadline(
      Promise.all([h.feed.subscribe(symbols(10)), h.feed.subscribe(symbols(10, 10))]),
      CALL_TIMEOUT_MS,
      'both callers answered before their own timeout',
    );
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS);
    for (const answer of [a, b]) {
      expect(answer.ok).toBe(false);
      if (!answer.ok) expect(answer.error).toMatchObject({ code: 'connack_timeout', retryable: true });
    }
    // No HTTP call named the session before the venue registered it.
    expect(h.sim.calls().filter((c) => c.code === 'INVALID_SESSION')).toEqual([]);
    await waitFor(() => h.feed.covered().size === 20, { timeoutMs: 10_000, message: 'covered once the session connects' });
  });

  it('answers a caller with reconcile_pending when the venue is slower than the caller’s timeout, and the work lands', async () => {
    await using h = await startVenueHarness({ feed: { callTimeoutMs: CALL_TIMEOUT_MS, reassertIntervalMs: 600_000 } });
    expect(await h.feed.subscribe(symbols(5))).toEqual({ ok: true });
    h.sim.setResponseDelay(2 * CALL_TIMEOUT_MS);
    const answer = await withDeadline(h.feed.subscribe(symbols(5, 5)), CALL_TIMEOUT_MS, 'answered before the caller’s timeout');
    expect(answer).toMatchObject({ ok: false, error: { code: 'reconcile_pending', retryable: true } });
    await waitFor(() => h.feed.covered().size === 10, { timeoutMs: 10_000, message: 'the slow subscribe still lands' });
  });

  it('answers a subscribe that an unsubscribe superseded before it settled', async () => {
    await using h = await startVenueHarness({ feed: { callTimeoutMs: 6_000, reassertIntervalMs: 600_000 } });
    expect(await h.feed.subscribe(symbols(5))).toEqual({ ok: true });
    const started = Date.now();
    const [sub, unsub] = await Promise.all([h.feed.subscribe(['S100']), h.feed.unsubscribe(['S100'])]);
    expect(sub).toEqual({ ok: true });
    expect(unsub).toEqual({ ok: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(h.feed.wantedSymbols()).toEqual(symbols(5));
  });

  it('refuses a bad symbol list before any state moves', async () => {
    await using h = await startVenueHarness({ feed: { reassertIntervalMs: 600_000 } });
    expect(await h.feed.subscribe(symbols(3))).toEqual({ ok: true });
    h.sim.clearCalls();
    for (const bad of [['BTC-USD', ''], 'BTC-USD', [42], ['btc usd'], null]) {
      const answer = await h.feed.subscribe(bad);
      expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_symbols', retryable: false, symbols: bad } });
      expect(await h.feed.updateSymbols(bad)).toMatchObject({ ok: false, error: { code: 'invalid_symbols' } });
      expect(await h.feed.unsubscribe(bad)).toMatchObject({ ok: false, error: { code: 'invalid_symbols' } });
    }
    expect(h.feed.wantedSymbols()).toEqual(symbols(3));
    expect(h.sim.calls()).toEqual([]);
  });

  it('sends an unsubscribe again when an older whole-list subscribe overtook it at the venue', async () => {
    // The re-assert's deadline (500 ms) is shorter than the venue takes to apply a subscribe
    // (1.5 s): the feed stops waiting, but the venue applies the old whole list late — after the
    // unsubscribe it answered at once.
    await using h = await startVenueHarness({ feed: { reassertIntervalMs: 400, reconcileTimeoutMs: 500 } });
    expect(await h.feed.subscribe(symbols(20))).toEqual({ ok: true });
    const [session] = h.sim.sessions();
    if (session === undefined) throw new Error('no session');
    h.sim.setResponseDelay(1_500, 'subscribe');
    await waitFor(() => h.sim.calls().some((c) => c.op === 'subscribe' && c.answeredAt === undefined && c.symbols.includes('S007')), {
      timeoutMs: 3_000,
      message: 'a whole-list re-assert naming S007 is in flight',
    });
    const unsubscribed = h.feed.unsubscribe(['S007']);
    await waitFor(() => h.sim.calls().some((c) => c.op === 'unsubscribe' && c.symbols.includes('S007') && c.status === 200), {
      timeoutMs: 5_000,
      message: 'S007 unsubscribed',
    });
    await waitFor(() => h.sim.session(session.id)?.subscribed.some((s) => s.symbol === 'S007') === true, {
      timeoutMs: 5_000,
      message: 'the late whole-list subscribe lands after the unsubscribe and re-adds S007 at the venue',
    });
    h.sim.setResponseDelay(0);
    await waitFor(
      () =>
        h.sim.session(session.id)?.subscribed.some((s) => s.symbol === 'S007') === false &&
        h.sim.calls().every((c) => c.answeredAt !== undefined),
      {
        timeoutMs: 5_000,
        message: 'the unsubscribe is sent again and the venue no longer holds S007',
      },
    );
    expect(
      h.sim.calls().filter((c) => c.op === 'unsubscribe' && c.symbols.includes('S007') && c.status === 200).length,
    ).toBeGreaterThanOrEqual(2);
    expect((await unsubscribed).ok).toBe(true);
    expect(h.sim.session(session.id)?.subscribed).toHaveLength(19);
  });
});
