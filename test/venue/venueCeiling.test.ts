import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

describe('venue ceiling lower than stated', () => {
  it('moves symbols until every session fits under 80, then refuses what five sessions cannot hold with a capacity error', async () => {
    await using h = await startVenueHarness({ sim: { symbolCeiling: 80 }, feed: { reassertIntervalMs: 1_000 } });
    const first = symbols(342);
    expect(await h.feed.subscribe(first)).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 342, { timeoutMs: 15_000, message: 'all 342 covered under a ceiling of 80' });
    const sessions = h.sim.sessions().filter((s) => s.connected);
    expect(sessions).toHaveLength(5);
    for (const s of sessions) expect(s.subscribed.length).toBeLessThanOrEqual(80);
    expect(new Set(sessions.flatMap((s) => s.subscribed.map((x) => x.symbol))).size).toBe(342);
    expect(h.notices).toContainEqual({ type: 'ceiling_lowered', ceiling: 80 });
    expect(h.notices.filter((n) => n.type === 'capacity')).toEqual([]);

    // 5 × 80 = 400: 58 more fit, the next 22 cannot, and no sixth session is ever opened.
    const more = symbols(80, 342);
    const answer = await h.feed.subscribe(more);
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.error.code).toBe('capacity');
    const full = answer.error.code === 'capacity' ? answer.error.symbols : [];
    expect(full).toHaveLength(22);
    await waitFor(() => h.feed.covered().size === 400, { timeoutMs: 10_000, message: '400 covered' });
    expect(h.sim.sessions().filter((s) => s.connected)).toHaveLength(5);
    const capacity = h.notices.filter((n) => n.type === 'capacity');
    expect(capacity).toHaveLength(1);
    expect(capacity[0]?.type === 'capacity' && capacity[0].symbols.slice().sort()).toEqual(full.slice().sort());
  });

  it('converges when the venue enforces less than its refusals state', async () => {
    await using h = await startVenueHarness({ feed: { reassertIntervalMs: 1_000 } });
    h.sim.setSymbolCeiling(80, 100);
    expect(await h.feed.subscribe(symbols(342))).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 342, { timeoutMs: 20_000, message: 'all 342 covered though every refusal says 100' });
    const sessions = h.sim.sessions().filter((s) => s.connected);
    expect(sessions.length).toBeLessThanOrEqual(5);
    for (const s of sessions) expect(s.subscribed.length).toBeLessThanOrEqual(80);
    // Each refusal moved the plan: a handful of them, not a storm.
    expect(h.sim.calls().filter((c) => c.code === 'TOO_MANY_SYMBOLS_SUBSCRIPTION').length).toBeLessThan(20);
  });
});
