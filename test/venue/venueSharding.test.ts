import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { holdings, startVenueHarness, symbols } from '../support/venueHarness.js';

describe('venue sharding', () => {
  it('spreads 342 symbols over 4 sessions, covers them all, and touches only the changed shard on add and remove', async () => {
    // No re-assert ticks during the test: every HTTP call seen is one the change itself caused.
    await using h = await startVenueHarness({ feed: { reassertIntervalMs: 600_000 } });
    const wanted = symbols(342);
    expect(await h.feed.subscribe(wanted)).toEqual({ ok: true });
    // Every kind at once, in one snapshot: coverage lapses after 600 ms without a payload, and
    // in a test process starved on a loaded machine a symbol counted a moment ago may already
    // have lapsed (334 of 342 did once) when a second look is taken.
    await waitFor(
      () => {
        const { byKind, covered } = h.feed.coverageSnapshot();
        return covered.size === 342 && Object.values(byKind).every((held) => held.size === 342);
      },
      { timeoutMs: 15_000, message: 'all 342 symbols covered, in every kind' },
    );

    const before = holdings(h.sim);
    expect(before.size).toBe(4);
    const all = [...before.values()].flat();
    expect(all).toHaveLength(342);
    expect(new Set(all).size).toBe(342);
    for (const held of before.values()) expect(held.length).toBeLessThanOrEqual(100);

    // A symbol that sorts before every other one: re-cutting a sorted list would shift them all.
    h.sim.clearCalls();
    expect(await h.feed.subscribe(['A000'])).toEqual({ ok: true });
    const addCalls = h.sim.calls();
    expect(addCalls.map((c) => ({ op: c.op, symbols: c.symbols }))).toEqual([{ op: 'subscribe', symbols: ['A000'] }]);
    const afterAdd = holdings(h.sim);
    for (const [id, held] of before) for (const s of held) expect(afterAdd.get(id)?.includes(s), `${s} stayed on ${id}`).toBe(true);
    await waitFor(() => h.feed.covered().has('A000'), { timeoutMs: 5_000, message: 'A000 covered' });

    // Removing one symbol is one unsubscribe on the session that held it, and nothing else.
    const victim = 'S050';
    const owner = [...before].find(([, held]) => held.includes(victim))?.[0];
    h.sim.clearCalls();
    expect(await h.feed.unsubscribe([victim])).toEqual({ ok: true });
    expect(h.sim.calls().map((c) => ({ op: c.op, sessionId: c.sessionId, symbols: c.symbols }))).toEqual([
      { op: 'unsubscribe', sessionId: owner, symbols: [victim] },
    ]);
    const afterRemove = holdings(h.sim);
    for (const [id, held] of afterAdd) {
      const expected = id === owner ? [...held].filter((s) => s !== victim) : [...held];
      expect([...(afterRemove.get(id) ?? [])].sort()).toEqual(expected.sort());
    }
    expect(h.feed.covered().has(victim)).toBe(false);
  });
});
