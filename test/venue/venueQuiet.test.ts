import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 500;

describe('venue session that goes quiet while connected', () => {
  it('is recovered by the blind re-assert within two ticks', async () => {
    await using h = await startVenueHarness({ feed: { reassertIntervalMs: TICK_MS } });
    expect(await h.feed.subscribe(symbols(150))).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 10_000, message: '150 symbols covered' });
    const [quiet] = h.sim.sessions().filter((s) => s.connected);
    if (quiet === undefined) throw new Error('no session');
    const itsSymbols = quiet.subscribed.map((s) => s.symbol);

    // Nothing on the wire says so: the session stays connected and its subscribe calls succeed.
    expect(h.sim.silence(quiet.id)).toBe(true);
    const silencedAt = Date.now();
    const publishedAtSilence = h.sim.published().bySession[quiet.id] ?? 0;
    await waitFor(() => (h.sim.published().bySession[quiet.id] ?? 0) > publishedAtSilence && h.sim.session(quiet.id)?.silenced === false, {
      // Two ticks, plus one publish round and the HTTP round trip.
      timeoutMs: 2 * TICK_MS + 300,
      message: 'the venue publishes to the quiet session again within two ticks',
    });
    const recoveredAt = Date.now();
    expect(recoveredAt - silencedAt).toBeLessThanOrEqual(2 * TICK_MS + 300);
    await waitFor(() => itsSymbols.every((s) => h.symbolsSeenSince(recoveredAt).has(s)), {
      timeoutMs: 2_000,
      message: 'every symbol of the quiet session streams again',
    });
    expect(h.sim.session(quiet.id)?.connected).toBe(true);
  });
});
