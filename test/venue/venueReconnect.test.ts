import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { seqBreaks, seqRegressions, startVenueHarness, symbols } from '../support/venueHarness.js';

describe('venue session dropped by the broker', () => {
  it('reconnects, replays the whole list for that session, and coverage returns', async () => {
    // Re-assert ticks far apart: recovery must come from the reconnect replay itself.
    await using h = await startVenueHarness({ redis: true, feed: { reassertIntervalMs: 600_000 } });
    const wanted = symbols(150);
    expect(await h.feed.subscribe(wanted)).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 10_000, message: '150 symbols covered' });

    const [first] = h.sim.sessions().filter((s) => s.connected);
    if (first === undefined) throw new Error('no session');
    const list = first.subscribed.map((s) => s.symbol).sort();
    expect(list.length).toBeGreaterThan(0);

    expect(h.sim.dropSession(first.id)).toBe(true);
    // The venue forgot the session and its subscriptions with the connection.
    await waitFor(() => h.feed.covered().size < 150, { timeoutMs: 5_000, message: 'coverage drops with the session' });
    await waitFor(() => h.sim.session(first.id)?.connected === true && (h.sim.session(first.id)?.subscribed.length ?? 0) === list.length, {
      timeoutMs: 10_000,
      message: 'the session reconnected and its whole list was subscribed again',
    });
    expect(
      h.sim
        .session(first.id)
        ?.subscribed.map((s) => s.symbol)
        .sort(),
    ).toEqual(list);
    await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 10_000, message: 'coverage back to 150' });
    const replays = h.sim.calls().filter((c) => c.sessionId === first.id && c.op === 'subscribe' && c.status === 200);
    expect(replays.at(-1)?.symbols.slice().sort()).toEqual(list);

    // In Redis, written as ingest writes: the other session's streams never skipped a sequence;
    // the dropped session's resumed after the replay and never went back or repeated.
    await h.sim.close();
    const others = wanted.filter((s) => !list.includes(s));
    for (const symbol of others) expect(seqBreaks(await h.streamEntries(symbol)), symbol).toEqual([]);
    for (const symbol of list) {
      const entries = await h.streamEntries(symbol);
      expect(entries.length, symbol).toBeGreaterThan(0);
      expect(seqRegressions(entries), symbol).toEqual([]);
    }
    expect(h.sinkErrors).toEqual([]);
  });
});
