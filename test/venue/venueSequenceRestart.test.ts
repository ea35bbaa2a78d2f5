import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

// A venue that restarts numbers every (symbol, kind) from seq 1 again. The dedupe ids are the
// venue's `<kind>:<seq>`, used within the hour before: every print after the restart was dropped
// as a duplicate, with no log, metric or notice, while coverage still said covered.
describe('a venue that restarts its sequence numbers', () => {
  it('keeps writing every print after the restart, each once', async () => {
    await using h = await startVenueHarness({ redis: true });
    const [symbol] = symbols(1);
    if (symbol === undefined) throw new Error('no symbol');
    expect(await h.feed.subscribe([symbol])).toEqual({ ok: true });
    const ticks = async () => (await h.streamEntries(symbol)).filter((e) => e.kind === 'tick').map((e) => e.seq);
    await waitFor(async () => (await ticks()).length >= 10, { timeoutMs: 10_000, message: 'ticks before the restart' });
    h.sim.restartSequences();
    const before = (await ticks()).length;
    await waitFor(async () => (await ticks()).length >= before + 10, {
      timeoutMs: 10_000,
      message: 'ticks after the restart were written',
    });
    const seqs = await ticks();
    const restartAt = seqs.findIndex((seq, i) => i > 0 && seq < (seqs[i - 1] ?? 0));
    expect(restartAt).toBeGreaterThan(0);
    const after = seqs.slice(restartAt);
    expect(after.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(after).size).toBe(after.length);
    expect(h.sinkErrors).toEqual([]);
  });
});
