import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 500;

describe('venue re-assert under a contended rate limiter', () => {
  it('waits for a token and recovers a quiet session, instead of dropping the tick', async () => {
    const failed: string[] = [];
    await using h = await startVenueHarness({
      limiter: { perSecond: 5, burst: 2 },
      feed: { reassertIntervalMs: TICK_MS, events: { attempt: (kind, outcome) => outcome === 'failed' && failed.push(kind) } },
    });
    expect(await h.feed.subscribe(symbols(150))).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 10_000, message: '150 symbols covered' });

    // Another user of the same limiter that is always queued: a fail-fast check finds no token
    // at any tick from here on, an acquire waits its turn behind it.
    let contending = true;
    let contenderTokens = 0;
    const contender = (async () => {
      while (contending) {
        await h.limiter.acquire();
        contenderTokens += 1;
      }
    })();
    try {
      await waitFor(() => h.limiter.waiting > 0, { timeoutMs: 2_000, message: 'the contender is queued on the limiter' });
      const [quiet] = h.sim.sessions().filter((s) => s.connected);
      if (quiet === undefined) throw new Error('no session');
      const published = h.sim.published().bySession[quiet.id] ?? 0;
      h.sim.silence(quiet.id);
      const silencedAt = Date.now();
      await waitFor(() => (h.sim.published().bySession[quiet.id] ?? 0) > published && h.sim.session(quiet.id)?.silenced === false, {
        timeoutMs: 6_000,
        message: 'the quiet session is re-asserted despite the contended limiter',
      });
      expect(contenderTokens).toBeGreaterThan(0);
      // The call that woke it was answered after the silence (it may have arrived just before).
      const recovery = h.sim.calls().find((c) => c.sessionId === quiet.id && c.op === 'subscribe' && (c.answeredAt ?? 0) >= silencedAt);
      expect(recovery?.status).toBe(200);
      expect(failed).toEqual([]);
      expect(h.notices.filter((n) => n.type === 'reassert_failing')).toEqual([]);
    } finally {
      contending = false;
      await contender;
    }
  });
});
