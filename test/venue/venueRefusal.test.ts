import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 300;
const TTL_MS = 2_500;

describe('venue INVALID_SYMBOL in a batch', () => {
  it('excludes and reports just the 17 unknown symbols once, covers the rest at once, and retries the 17 after the TTL', async () => {
    const batch = symbols(60);
    const unknown = batch.filter((_, i) => i % 3 === 1).slice(0, 17);
    expect(unknown).toHaveLength(17);
    await using h = await startVenueHarness({
      sim: { unknownSymbols: unknown },
      feed: { reassertIntervalMs: TICK_MS, rejectedSymbolTtlMs: TTL_MS },
    });

    const answer = await h.feed.subscribe(batch);
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.error.code).toBe('symbols_refused');
    expect(answer.error.code === 'symbols_refused' && answer.error.symbols.slice().sort()).toEqual(unknown.slice().sort());

    const known = batch.filter((s) => !unknown.includes(s));
    await waitFor(() => known.every((s) => h.feed.covered().has(s)), { timeoutMs: 5_000, message: 'the 43 known symbols covered' });
    expect(unknown.some((s) => h.feed.covered().has(s))).toBe(false);

    // Several re-assert ticks later, still one refusal notice naming exactly the 17.
    const ticksLater = Date.now() + 3 * TICK_MS;
    await waitFor(
      () =>
        Date.now() >= ticksLater && h.sim.calls().filter((c) => c.receivedAt > ticksLater - 3 * TICK_MS && c.status === 200).length >= 2,
      {
        timeoutMs: 5_000,
        message: 'three ticks of re-asserts',
      },
    );
    const refusals = h.notices.filter((n) => n.type === 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.type === 'refusal' && refusals[0].symbols.slice().sort()).toEqual(unknown.slice().sort());
    // The re-asserts carried only what the venue accepts, so none of them failed the batch again.
    expect(h.sim.calls().filter((c) => c.code === 'INVALID_SYMBOL')).toHaveLength(1);
    expect(h.feed.wantedSymbols()).toHaveLength(60);

    // The venue lists them later; once their TTL runs out they return by themselves, nobody calling.
    h.sim.setUnknownSymbols([]);
    await waitFor(() => h.feed.covered().size === 60, {
      timeoutMs: TTL_MS + 4 * TICK_MS + 2_000,
      message: 'the 17 covered after their TTL',
    });
    expect(
      h.notices
        .filter((n) => n.type === 'refusal_expired')
        .flatMap((n) => (n.type === 'refusal_expired' ? n.symbols : []))
        .sort(),
    ).toEqual(unknown.slice().sort());
    expect(h.notices.filter((n) => n.type === 'refusal')).toHaveLength(1);
  });

  it('sends the rest of a refused batch at once, not at the next tick', async () => {
    const batch = symbols(30);
    const unknown = ['S003', 'S017'];
    await using h = await startVenueHarness({ sim: { unknownSymbols: unknown }, feed: { reassertIntervalMs: 600_000 } });
    const answer = await h.feed.subscribe(batch);
    expect(answer).toMatchObject({ ok: false, error: { code: 'symbols_refused', symbols: unknown } });
    await waitFor(() => h.feed.covered().size === 28, { timeoutMs: 1_500, message: 'the other 28 covered without waiting for a tick' });
    expect(h.sim.calls().map((c) => c.code ?? c.status)).toEqual(['INVALID_SYMBOL', 200]);
  });
});
