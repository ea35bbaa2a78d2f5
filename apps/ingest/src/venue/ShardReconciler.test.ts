import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ShardReconciler } from './ShardReconciler.js';
import type { AttemptResult } from './ShardReconciler.js';
import type { VenueCallResult, VenueHttpClient } from './VenueHttpClient.js';
import { VenueShard } from './VenueShard.js';

/** An HTTP client whose answers the test hands out by hand, deliberately ignoring aborts. */
function manualHttp() {
  const pending: { symbols: readonly string[]; answer: (r: VenueCallResult) => void }[] = [];
  const call = (_session: string, symbols: readonly string[]) =>
    new Promise<VenueCallResult>((resolve) => pending.push({ symbols, answer: resolve }));
  return { pending, http: { subscribe: call, unsubscribe: call } as unknown as VenueHttpClient };
}

describe('ShardReconciler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('lets a deadline and an answer conclude only the attempt they belong to', async () => {
    const { pending, http } = manualHttp();
    const concluded: { token: number; result: AttemptResult }[] = [];
    let stale = 0;
    const reconciler = new ShardReconciler(http, ['quote'], 1_000, Date.now, {
      concluded: (_shard, attempt, result) => concluded.push({ token: attempt.token, result }),
      staleAnswer: () => (stale += 1),
    });
    const shard = new VenueShard(
      0,
      () => 's-0',
      () => ({ open: () => undefined, close: () => Promise.resolve(), destroy: () => undefined }),
    );
    shard.assign(['A', 'B']);

    reconciler.run(shard, 'reassert', ['A', 'B'], []);
    const first = shard.attempt?.token;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(concluded).toEqual([{ token: first, result: { kind: 'failed', reason: 'no answer within 1000 ms' } }]);
    expect(shard.attempt).toBeUndefined();

    // The next attempt starts; the first one's answer arrives late, while it runs.
    reconciler.run(shard, 'reassert', ['A', 'B'], []);
    const second = shard.attempt?.token;
    pending[0]?.answer({ ok: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(stale).toBe(1);
    expect(shard.attempt?.token).toBe(second);
    expect(concluded).toHaveLength(1);

    // The first attempt's deadline has fired already; the second's own answer concludes it.
    await vi.advanceTimersByTimeAsync(500);
    expect(shard.attempt?.token).toBe(second);
    pending[1]?.answer({ ok: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(concluded.at(-1)).toEqual({ token: second, result: { kind: 'ok' } });
    expect(['A', 'B'].map((s) => shard.isConfirmed(s))).toEqual([true, true]);
    expect(shard.confirmedCount).toBe(2);
    // Its deadline was cleared with it: nothing fires later.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(concluded).toHaveLength(2);
  });

  it('keeps what a timed-out subscribe sent as maybe-held, and unsubscribes it again while unwanted', async () => {
    const { http } = manualHttp();
    const reconciler = new ShardReconciler(http, ['quote'], 1_000, Date.now, { concluded: () => undefined, staleAnswer: () => undefined });
    const shard = new VenueShard(
      0,
      () => 's-0',
      () => ({ open: () => undefined, close: () => Promise.resolve(), destroy: () => undefined }),
    );
    shard.assign(['A', 'B']);
    reconciler.run(shard, 'diff', ['A', 'B'], []);
    await vi.advanceTimersByTimeAsync(1_000);
    shard.assign(['A']);
    expect(shard.diff().unsubscribe).toEqual(['B']);
    shard.unsubscribed(['B']);
    // The venue may still apply the old subscribe: each re-assert names B again for a while.
    expect(shard.stale(Date.now())).toEqual(['B']);
    expect(shard.stale(Date.now() + 60_001)).toEqual([]);
  });
});
