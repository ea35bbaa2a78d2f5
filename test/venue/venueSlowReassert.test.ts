import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 300;
const DELAY_MS = 800;

describe('venue re-assert slower than the tick interval', () => {
  it('is neither killed by its own deadline nor stacked: one attempt per session at a time, each answered', async () => {
    const outcomes: string[] = [];
    let skipped = 0;
    let stale = 0;
    await using h = await startVenueHarness({
      feed: {
        reassertIntervalMs: TICK_MS,
        reconcileTimeoutMs: 3_000,
        events: {
          attempt: (kind, outcome) => kind === 'reassert' && outcomes.push(outcome),
          reassertSkipped: () => (skipped += 1),
          staleAnswer: () => (stale += 1),
        },
      },
    });
    expect(await h.feed.subscribe(symbols(150))).toEqual({ ok: true });
    await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 10_000, message: '150 symbols covered' });

    h.sim.setResponseDelay(DELAY_MS);
    h.sim.clearCalls();
    outcomes.length = 0;
    const from = Date.now();
    await waitFor(() => outcomes.length >= 4 && Date.now() - from > 6 * TICK_MS, {
      timeoutMs: 10_000,
      message: 'four slow re-asserts answered',
    });

    expect(outcomes.every((o) => o === 'ok')).toBe(true);
    expect(skipped).toBeGreaterThan(0);
    expect(stale).toBe(0);
    // Per session, no call was sent before the previous one was answered.
    const bySession = new Map<string, { receivedAt: number; answeredAt?: number }[]>();
    for (const c of h.sim.calls()) bySession.set(c.sessionId ?? '', [...(bySession.get(c.sessionId ?? '') ?? []), c]);
    for (const [session, calls] of bySession) {
      for (let i = 1; i < calls.length; i++) {
        const previous = calls[i - 1];
        expect(previous?.answeredAt, `call ${i - 1} on ${session} answered`).toBeDefined();
        expect(calls[i]?.receivedAt, `call ${i} on ${session} sent after call ${i - 1} was answered`).toBeGreaterThanOrEqual(
          previous?.answeredAt ?? Infinity,
        );
      }
    }
    expect(
      h.sim
        .calls()
        .filter((c) => c.answeredAt !== undefined)
        .every((c) => c.status === 200),
    ).toBe(true);
  });
});
