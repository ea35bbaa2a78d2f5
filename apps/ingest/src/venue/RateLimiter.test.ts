import { withDeadline } from '@streamgate/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, RateLimiterAbortError } from './RateLimiter.js';

function manualClock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (ms: number) => (t = ms) };
}

describe('RateLimiter.tryTake', () => {
  it('spends the burst, then refills at the rate, never above the burst', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perSecond: 10, burst: 3, now: clock.now });
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, true, false]);
    clock.advance(99);
    expect(limiter.tryTake()).toBe(false);
    clock.advance(1);
    expect(limiter.tryTake()).toBe(true);
    clock.advance(60_000);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, true, false]);
  });

  it('does not drain when the clock steps backwards', () => {
    const clock = manualClock(5_000);
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, now: clock.now });
    clock.set(0);
    expect(limiter.tryTake()).toBe(true);
  });

  it('refuses bad options at construction', () => {
    expect(() => new RateLimiter({ perSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => new RateLimiter({ perSecond: 1, burst: 0.5 })).toThrow(RangeError);
    expect(() => new RateLimiter({ perSecond: Number.NaN, burst: 1 })).toThrow(RangeError);
  });
});

describe('RateLimiter.acquire (fake timers, clock = Date.now)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(perSecond: number, burst: number) {
    vi.useFakeTimers();
    const limiter = new RateLimiter({ perSecond, burst, now: () => Date.now() });
    const order: string[] = [];
    const take = (name: string, signal?: AbortSignal) =>
      limiter.acquire(signal).then(
        () => order.push(name),
        (error: unknown) => order.push(`${name}:${error instanceof RateLimiterAbortError ? error.code : 'other'}`),
      );
    return { limiter, order, take };
  }

  it('serves waiters first in, first out, one per token, with a single timer for the head', async () => {
    const { limiter, order, take } = setup(10, 1);
    const all = ['a', 'b', 'c', 'd'].map((n) => take(n));
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['a']);
    expect(limiter.waiting).toBe(3);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(order).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all(all);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps fail-fast callers from jumping the queue', async () => {
    const { limiter, order, take } = setup(10, 1);
    void take('a');
    void take('b');
    await vi.advanceTimersByTimeAsync(100);
    expect(order).toEqual(['a', 'b']);
    void take('c');
    await vi.advanceTimersByTimeAsync(100);
    // The bucket refilled at 200 ms, but 'c' queued before this check.
    expect(order).toEqual(['a', 'b', 'c']);
    expect(limiter.tryTake()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(limiter.tryTake()).toBe(true);
  });

  it('abort rejects only that waiter; the next one is served when the aborted one would have been', async () => {
    const { order, take } = setup(10, 1);
    const b = new AbortController();
    void take('a');
    const bDone = take('b', b.signal);
    void take('c');
    await vi.advanceTimersByTimeAsync(50);
    b.abort(new Error('caller gone'));
    await bDone;
    expect(order).toEqual(['a', 'b:aborted']);
    await vi.advanceTimersByTimeAsync(50);
    expect(order).toEqual(['a', 'b:aborted', 'c']);
  });

  it('clears the timer when the last waiter aborts, and rejects an already-aborted signal without spending a token', async () => {
    const { limiter, order, take } = setup(10, 1);
    void take('a');
    const b = new AbortController();
    const bDone = take('b', b.signal);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    b.abort();
    await bDone;
    expect(vi.getTimerCount()).toBe(0);
    expect(limiter.waiting).toBe(0);

    await vi.advanceTimersByTimeAsync(100);
    await take('c', AbortSignal.abort());
    expect(order).toEqual(['a', 'b:aborted', 'c:aborted']);
    expect(limiter.tryTake()).toBe(true);
  });

  it('the rejection is AbortError-like and carries the reason', async () => {
    vi.useFakeTimers();
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, now: () => Date.now() });
    limiter.tryTake();
    const controller = new AbortController();
    const pending = limiter.acquire(controller.signal);
    const reason = new Error('shutdown');
    controller.abort(reason);
    const error: unknown = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimiterAbortError);
    expect(error).toMatchObject({ name: 'AbortError', code: 'aborted', retryable: false, cause: reason });
  });
});

describe('RateLimiter.acquire (real timers)', () => {
  it('paces back-to-back waiters at the rate', async () => {
    const limiter = new RateLimiter({ perSecond: 50, burst: 1 });
    const started = performance.now();
    const stamps: number[] = [];
    await withDeadline(
      Promise.all([0, 1, 2].map(() => limiter.acquire().then(() => stamps.push(performance.now() - started)))),
      2_000,
      'three tokens at 50/s',
    );
    expect(stamps).toHaveLength(3);
    // Two refills of 20 ms each; timers never fire early, so this is a floor, not a flaky window.
    expect(stamps[2]).toBeGreaterThanOrEqual(39);
    expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
  });
});
