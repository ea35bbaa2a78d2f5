import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

describe('venue session ids as MQTT 3.1.1 client ids', () => {
  it('connects and receives every symbol from a venue that takes only the client ids MQTT 3.1.1 guarantees', async () => {
    // The longest venue name the topology allows: it must not leak into the client id.
    await using h = await startVenueHarness({
      // Fewer payloads than the harness's default: the sim and the feed share this process, and
      // what is judged here is who may connect, not throughput.
      sim: { strictClientIds: true, publishIntervalMs: 200 },
      feed: { venue: 'a-very-long-venue-name_012345678', maxSymbolsPerSession: 50 },
    });
    const wanted = symbols(150);
    expect(await h.feed.subscribe(wanted)).toEqual({ ok: true });
    // Payloads received, not coverage (stale after 600 ms): a loaded machine can starve this one
    // process long enough to make coverage flap, and what is judged here is the session ids.
    await waitFor(() => wanted.every((s) => (h.received.get(s) ?? 0) > 0), {
      timeoutMs: 20_000,
      message: 'payloads for all 150 over three sessions',
    });
    const sessions = h.sim.sessions().filter((s) => s.connected);
    expect(sessions).toHaveLength(3);
    for (const s of sessions) expect(s.id).toMatch(/^[0-9a-zA-Z]{1,23}$/);
    // Each HTTP call named one of those live sessions.
    const ids = new Set(sessions.map((s) => s.id));
    expect(h.sim.calls().every((c) => c.status === 200 && c.sessionId !== undefined && ids.has(c.sessionId))).toBe(true);
    expect(h.notices.filter((n) => n.type === 'session_refused')).toEqual([]);

    // A dropped session redials under its own id; the venue sees the same session again.
    const [dropped] = sessions;
    if (dropped === undefined) throw new Error('no session');
    h.sim.dropSession(dropped.id);
    await waitFor(() => h.sim.session(dropped.id)?.subscribed.length === dropped.subscribed.length, {
      timeoutMs: 20_000,
      message: 'the dropped session back under its id with its symbols',
    });
    expect(h.sim.sessions().filter((s) => s.connected)).toHaveLength(3);
  });
});
