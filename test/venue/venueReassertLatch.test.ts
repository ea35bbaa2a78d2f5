import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

describe('venue re-assert failures', () => {
  it('are reported once per session on entering failure and once on recovery, not every tick', async () => {
    let failedReasserts = 0;
    await using h = await startVenueHarness({
      feed: {
        reassertIntervalMs: 300,
        events: { attempt: (kind, outcome) => kind === 'reassert' && outcome === 'failed' && (failedReasserts += 1) },
      },
    });
    expect(await h.feed.subscribe(symbols(150))).toEqual({ ok: true });
    const shards = h.sim.sessions().length;
    expect(shards).toBe(2);

    // Four ticks' worth of re-asserts answered 503 for both sessions.
    h.sim.failNextCalls(4 * shards, 503);
    await waitFor(() => failedReasserts >= 4 * shards, { timeoutMs: 10_000, message: 'four failed re-asserts per session' });
    await waitFor(() => h.notices.filter((n) => n.type === 'reassert_recovered').length === shards, {
      timeoutMs: 5_000,
      message: 'each session recovers',
    });
    const failing = h.notices.filter((n) => n.type === 'reassert_failing');
    const recovered = h.notices.filter((n) => n.type === 'reassert_recovered');
    expect(failing.map((n) => (n.type === 'reassert_failing' ? n.shard : -1)).sort()).toEqual([0, 1]);
    expect(recovered.map((n) => (n.type === 'reassert_recovered' ? n.shard : -1)).sort()).toEqual([0, 1]);
    for (const n of recovered) if (n.type === 'reassert_recovered') expect(n.failures).toBeGreaterThanOrEqual(2);
    // Later healthy ticks add nothing.
    const count = h.notices.length;
    const later = Date.now();
    await waitFor(() => h.sim.calls().filter((c) => c.receivedAt > later && c.status === 200).length >= 2 * shards, {
      timeoutMs: 5_000,
      message: 'two healthy ticks',
    });
    expect(h.notices.slice(count).filter((n) => n.type !== 'coverage')).toEqual([]);
  });
});
