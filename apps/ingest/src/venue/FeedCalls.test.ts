import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FeedAnswer } from './FeedError.js';
import { FeedCalls } from './FeedCalls.js';
import type { SymbolView } from './FeedCalls.js';

/** What the fake feed says about one symbol; unset fields mean "no". */
interface SymbolState {
  rejectedUntil?: number;
  unplaced?: boolean;
  confirmed?: boolean;
  held?: boolean;
  onConnectedShard?: boolean;
}

class FakeView implements SymbolView {
  readonly states = new Map<string, SymbolState>();
  set(symbol: string, state: SymbolState): void {
    this.states.set(symbol, state);
  }
  rejectedUntil(symbol: string): number | undefined {
    return this.states.get(symbol)?.rejectedUntil;
  }
  unplaced(symbol: string): boolean {
    return this.states.get(symbol)?.unplaced === true;
  }
  confirmed(symbol: string): boolean {
    return this.states.get(symbol)?.confirmed === true;
  }
  held(symbol: string): boolean {
    return this.states.get(symbol)?.held === true;
  }
  onConnectedShard(symbol: string): boolean {
    return this.states.get(symbol)?.onConnectedShard === true;
  }
}

const ANSWER_WITHIN_MS = 10_000;

/** A call's answer as it stands: undefined while unanswered. */
function track(promise: Promise<FeedAnswer>): { readonly answer: FeedAnswer | undefined } {
  const box: { answer: FeedAnswer | undefined } = { answer: undefined };
  void promise.then((answer) => (box.answer = answer));
  return box;
}

/** Lets the promise callbacks of answered calls run. */
const flush = () => vi.advanceTimersByTimeAsync(0);

function setup() {
  const view = new FakeView();
  const calls = new FeedCalls(view, ANSWER_WITHIN_MS, () => Date.now());
  return { view, calls };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('FeedCalls', () => {
  it('answers ok only once every added symbol is confirmed and every removed one is no longer held', async () => {
    const { view, calls } = setup();
    view.set('AAA', { onConnectedShard: true });
    view.set('BBB', { onConnectedShard: true });
    view.set('OLD', { held: true, onConnectedShard: true });
    const call = track(calls.wait(['AAA', 'BBB'], ['OLD']));
    await flush();
    expect(call.answer).toBeUndefined();

    view.set('AAA', { confirmed: true, onConnectedShard: true });
    calls.settle();
    await flush();
    expect(call.answer).toBeUndefined();

    view.set('BBB', { confirmed: true, onConnectedShard: true });
    calls.settle();
    await flush();
    expect(call.answer).toBeUndefined();
    expect(calls.size).toBe(1);

    view.set('OLD', {});
    calls.settle();
    await flush();
    expect(call.answer).toEqual({ ok: true });
    expect(calls.size).toBe(0);
    // Its deadline went with it.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers at once when nothing is left to wait for (already confirmed, or an empty call)', async () => {
    const { view, calls } = setup();
    view.set('AAA', { confirmed: true, onConnectedShard: true });
    const confirmed = track(calls.wait(['AAA'], []));
    const empty = track(calls.wait([], []));
    await flush();
    expect(confirmed.answer).toEqual({ ok: true });
    expect(empty.answer).toEqual({ ok: true });
    expect(calls.size).toBe(0);
  });

  it('answers symbols_refused naming only the refused symbols, with the latest expiry, once the rest settled', async () => {
    const { view, calls } = setup();
    view.set('BAD1', { rejectedUntil: 5_000 });
    view.set('BAD2', { rejectedUntil: 9_000 });
    view.set('GOOD', { onConnectedShard: true });
    const call = track(calls.wait(['BAD1', 'GOOD', 'BAD2'], []));
    await flush();
    // GOOD is still on its way: no answer yet, refusals or not.
    expect(call.answer).toBeUndefined();
    view.set('GOOD', { confirmed: true, onConnectedShard: true });
    calls.settle();
    await flush();
    expect(call.answer).toMatchObject({
      ok: false,
      error: { code: 'symbols_refused', retryable: false, symbols: ['BAD1', 'BAD2'], until: 9_000 },
    });
  });

  it('answers capacity naming the symbols no session has room for', async () => {
    const { view, calls } = setup();
    view.set('FITS', { confirmed: true, onConnectedShard: true });
    view.set('FULL1', { unplaced: true });
    view.set('FULL2', { unplaced: true });
    const call = track(calls.wait(['FITS', 'FULL1', 'FULL2'], []));
    await flush();
    expect(call.answer).toMatchObject({ ok: false, error: { code: 'capacity', retryable: false, symbols: ['FULL1', 'FULL2'] } });
  });

  it('arms exactly one timer per call, however often it is re-evaluated', async () => {
    const { view, calls } = setup();
    view.set('AAA', { onConnectedShard: true });
    void calls.wait(['AAA'], []);
    expect(vi.getTimerCount()).toBe(1);
    for (let i = 0; i < 5; i++) calls.settle();
    expect(vi.getTimerCount()).toBe(1);
    void calls.wait(['AAA'], []);
    expect(vi.getTimerCount()).toBe(2);
    await flush();
  });

  it('at its deadline, a call riding a connected shard gets reconcile_pending with the time it waited', async () => {
    const { view, calls } = setup();
    view.set('AAA', { onConnectedShard: true });
    const call = track(calls.wait(['AAA'], []));
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS - 1);
    expect(call.answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(call.answer).toMatchObject({ ok: false, error: { code: 'reconcile_pending', retryable: true, ms: ANSWER_WITHIN_MS } });
    expect(calls.size).toBe(0);
  });

  it('at its deadline, a call with a symbol on a shard that is not connected gets connack_timeout', async () => {
    const { view, calls } = setup();
    view.set('UP', { onConnectedShard: true });
    view.set('CONNECTING', { onConnectedShard: false });
    const call = track(calls.wait(['UP', 'CONNECTING'], []));
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS);
    expect(call.answer).toMatchObject({ ok: false, error: { code: 'connack_timeout', retryable: true, ms: ANSWER_WITHIN_MS } });
  });

  it('a refused symbol (on no shard at all) does not make a pending call look parked on a connecting shard', async () => {
    const { view, calls } = setup();
    view.set('BAD', { rejectedUntil: 5_000 });
    view.set('SLOW', { onConnectedShard: true });
    const call = track(calls.wait(['BAD', 'SLOW'], []));
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS);
    expect(call.answer).toMatchObject({ ok: false, error: { code: 'reconcile_pending' } });
  });

  it('at its deadline, a call that has in fact settled gets its real answer, not a pending one', async () => {
    const { view, calls } = setup();
    view.set('AAA', { onConnectedShard: true });
    const call = track(calls.wait(['AAA'], []));
    // Confirmed without anyone calling settle(): the deadline evaluates before answering.
    view.set('AAA', { confirmed: true, onConnectedShard: true });
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS);
    expect(call.answer).toEqual({ ok: true });
  });

  it('fail() answers only the calls touching the given symbols, added or removed', async () => {
    const { view, calls } = setup();
    for (const s of ['A', 'B', 'C', 'D']) view.set(s, { onConnectedShard: true, held: true });
    const addsA = track(calls.wait(['A'], []));
    const removesB = track(calls.wait([], ['B']));
    const untouched = track(calls.wait(['C'], ['D']));
    calls.fail({ code: 'shard_crashed', retryable: true, message: 'crashed' }, new Set(['A', 'B', 'X']));
    await flush();
    expect(addsA.answer).toMatchObject({ ok: false, error: { code: 'shard_crashed' } });
    expect(removesB.answer).toMatchObject({ ok: false, error: { code: 'shard_crashed' } });
    expect(untouched.answer).toBeUndefined();
    expect(calls.size).toBe(1);
    // The failed calls' timers are gone; the untouched one keeps its own.
    expect(vi.getTimerCount()).toBe(1);

    // Without symbols, every call is answered (the feed closing).
    calls.fail({ code: 'closed', retryable: false, message: 'closing' });
    await flush();
    expect(untouched.answer).toMatchObject({ ok: false, error: { code: 'closed' } });
    expect(calls.size).toBe(0);
  });

  it('never answers a call twice: a failed or settled call is out of every later settle, fail and deadline', async () => {
    const { view, calls } = setup();
    view.set('A', { onConnectedShard: true });
    const answers: FeedAnswer[] = [];
    const resolveSpy = (answer: FeedAnswer) => answers.push(answer);
    void calls.wait(['A'], []).then(resolveSpy);
    calls.fail({ code: 'shard_crashed', retryable: true, message: 'crashed' }, new Set(['A']));
    view.set('A', { confirmed: true, onConnectedShard: true });
    calls.settle();
    calls.fail({ code: 'closed', retryable: false, message: 'closing' });
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS * 2);
    expect(answers).toEqual([{ ok: false, error: { code: 'shard_crashed', retryable: true, message: 'crashed' } }]);
    expect(calls.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);

    // A call answered by settle() is not answered again by its deadline or by fail().
    const later = vi.fn();
    void calls.wait(['A'], []).then(later);
    calls.fail({ code: 'closed', retryable: false, message: 'closing' });
    await vi.advanceTimersByTimeAsync(ANSWER_WITHIN_MS * 2);
    expect(later).toHaveBeenCalledTimes(1);
    expect(later).toHaveBeenCalledWith({ ok: true });
  });
});
