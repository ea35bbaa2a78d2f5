import { afterEach, describe, expect, it } from 'vitest';
import { ALL_SUB_TYPES, postJson, sessionTracker, SIM_APP_KEY } from '../__fixtures__/venueSession.js';
import { waitFor } from '../waitFor.js';
import { startVenueSim } from './startVenueSim.js';
import type { VenueSim } from './startVenueSim.js';

const KEY = SIM_APP_KEY;
const ALL = ALL_SUB_TYPES;
const sessions = sessionTracker();
const open = sessions.open;

/** `appKey: null` sends no x-app-key header. */
const subscribe = (venue: VenueSim, body: unknown, appKey: string | null = KEY) =>
  postJson(`${venue.httpUrl}/v1/market-data/subscribe`, body, appKey ?? undefined);
const unsubscribe = (venue: VenueSim, body: unknown) => postJson(`${venue.httpUrl}/v1/market-data/unsubscribe`, body, KEY);
const batch = (sessionId: string, symbols: string[], subTypes = ALL) => ({ session_id: sessionId, symbols, sub_types: subTypes });
const symbolsOf = (venue: VenueSim, id: string) => venue.session(id)?.subscribed.map((s) => s.symbol);

afterEach(() => sessions.endAll());

describe('venue HTTP: subscribe rules', () => {
  it('answers 401 INVALID_APP_KEY to a missing or unknown key, and records the call', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    expect(await subscribe(venue, batch('s1', ['AAPL']), 'nobody')).toEqual({ status: 401, body: { code: 'INVALID_APP_KEY' } });
    expect(await subscribe(venue, batch('s1', ['AAPL']), null)).toEqual({ status: 401, body: { code: 'INVALID_APP_KEY' } });
    const [first] = venue.calls();
    expect(first).toMatchObject({
      op: 'subscribe',
      appKey: 'nobody',
      sessionId: 's1',
      symbols: ['AAPL'],
      status: 401,
      code: 'INVALID_APP_KEY',
    });
    expect(first?.answeredAt).toBeGreaterThanOrEqual(first?.receivedAt ?? Infinity);
    expect(symbolsOf(venue, 's1')).toEqual([]);
  });

  it('answers INVALID_SESSION for no such session, or one under another key', async () => {
    await using venue = await startVenueSim({ appKeys: [KEY, 'other-key'] });
    await open(venue, 'theirs', 'other-key');
    expect(await subscribe(venue, batch('ghost', ['AAPL']))).toEqual({ status: 400, body: { code: 'INVALID_SESSION' } });
    expect(await subscribe(venue, batch('theirs', ['AAPL']))).toEqual({ status: 400, body: { code: 'INVALID_SESSION' } });
    expect(await unsubscribe(venue, { session_id: 'ghost', symbols: ['AAPL'] })).toMatchObject({
      status: 400,
      body: { code: 'INVALID_SESSION' },
    });
  });

  it('refuses a whole batch with INVALID_SYMBOL naming only the unknown ones, until they are listed', async () => {
    await using venue = await startVenueSim({ unknownSymbols: ['DOGE-USD'] });
    await open(venue, 's1');
    venue.setUnknownSymbols(['DOGE-USD', 'PEPE-USD']);
    const refused = await subscribe(venue, batch('s1', ['BTC-USD', 'DOGE-USD', 'lower-case', 'PEPE-USD', 'DOGE-USD']));
    expect(refused).toEqual({ status: 400, body: { code: 'INVALID_SYMBOL', symbols: ['DOGE-USD', 'lower-case', 'PEPE-USD'] } });
    expect(symbolsOf(venue, 's1')).toEqual([]);
    venue.setUnknownSymbols([]);
    expect(await subscribe(venue, batch('s1', ['BTC-USD', 'DOGE-USD', 'PEPE-USD']))).toMatchObject({ status: 200 });
    expect(symbolsOf(venue, 's1')).toEqual(['BTC-USD', 'DOGE-USD', 'PEPE-USD']);
  });

  it('answers TOO_MANY_SYMBOLS_SUBSCRIPTION past the ceiling, counting what the session holds', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    const hundred = Array.from({ length: 100 }, (_, i) => `S${i}`);
    expect(await subscribe(venue, batch('s1', hundred.slice(0, 60)))).toMatchObject({ status: 200 });
    // Re-asking for held symbols, or for other kinds of them, adds nothing to the count.
    expect(await subscribe(venue, batch('s1', hundred, ['QUOTE']))).toMatchObject({ status: 200 });
    expect(await subscribe(venue, batch('s1', ['S0', 'EXTRA']))).toEqual({
      status: 400,
      body: { code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 100 },
    });
    expect(symbolsOf(venue, 's1')).toHaveLength(100);

    await open(venue, 's2');
    venue.setSymbolCeiling(2);
    expect(await subscribe(venue, batch('s2', ['A', 'B', 'C']))).toEqual({
      status: 400,
      body: { code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 2 },
    });
    expect(symbolsOf(venue, 's2')).toEqual([]);
    expect(await subscribe(venue, batch('s2', ['A', 'B']))).toMatchObject({ status: 200 });
  });

  it('subscribes additively per kind and unsubscribes per kind, ignoring what is not held', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    await subscribe(venue, batch('s1', ['AAPL'], ['QUOTE']));
    await subscribe(venue, batch('s1', ['AAPL', 'MSFT'], ['SNAPSHOT']));
    expect(venue.session('s1')?.subscribed).toEqual([
      { symbol: 'AAPL', kinds: ['snapshot', 'quote'] },
      { symbol: 'MSFT', kinds: ['snapshot'] },
    ]);
    expect(await unsubscribe(venue, { session_id: 's1', symbols: ['AAPL', 'NEVER'], sub_types: ['SNAPSHOT'] })).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await unsubscribe(venue, { session_id: 's1', symbols: ['MSFT'] })).toMatchObject({ status: 200 });
    expect(venue.session('s1')?.subscribed).toEqual([{ symbol: 'AAPL', kinds: ['quote'] }]);
  });
});

describe('venue HTTP: malformed requests', () => {
  it('answers 400 INVALID_PARAMETER, naming the field, and records the call', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    const cases: [unknown, RegExp][] = [
      ['{"session_id":', /not JSON/],
      ['[1,2]', /body/],
      [{ symbols: ['AAPL'], sub_types: ALL }, /session_id/],
      [{ session_id: 's1', symbols: [], sub_types: ALL }, /symbols/],
      [{ session_id: 's1', symbols: ['AAPL', 7], sub_types: ALL }, /symbols\[1\]/],
      [{ session_id: 's1', symbols: ['AAPL'] }, /sub_types/],
      [{ session_id: 's1', symbols: ['AAPL'], sub_types: ['QUOTE', 'BOOK'] }, /sub_types\[1\]/],
    ];
    for (const [body, field] of cases) {
      const answer = await subscribe(venue, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe('INVALID_PARAMETER');
      expect(String(answer.body.message)).toMatch(field);
    }
    expect(await unsubscribe(venue, '{oops')).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER' } });
    expect(venue.calls().map((c) => c.status)).toEqual(Array<number>(cases.length + 1).fill(400));
    expect(venue.calls()[4]).toMatchObject({ sessionId: 's1', symbols: ['AAPL'], code: 'INVALID_PARAMETER' });
    expect(symbolsOf(venue, 's1')).toEqual([]);
  });

  it('answers 404 off the API and keeps serving after a client hangs up mid-body', async () => {
    await using venue = await startVenueSim();
    expect(await postJson(`${venue.httpUrl}/v1/elsewhere`, {}, KEY)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const aborted = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"session_id":'));
        aborted.abort();
      },
    });
    await expect(
      fetch(`${venue.httpUrl}/v1/market-data/subscribe`, { method: 'POST', body, signal: aborted.signal, duplex: 'half' } as RequestInit),
    ).rejects.toThrow();
    expect(await subscribe(venue, batch('nobody', ['AAPL']))).toMatchObject({ status: 400, body: { code: 'INVALID_SESSION' } });
  });
});

describe('venue HTTP: faults on the API', () => {
  it('delays answers by setResponseDelay and acts at the end of the delay', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    venue.setResponseDelay(200);
    const answer = subscribe(venue, batch('s1', ['AAPL']));
    await waitFor(() => venue.calls().length === 1, { timeoutMs: 2_000, message: 'call arrived' });
    expect(venue.calls()[0]?.status).toBeUndefined();
    expect(symbolsOf(venue, 's1')).toEqual([]);
    expect(await answer).toMatchObject({ status: 200 });
    const [call] = venue.calls();
    expect((call?.answeredAt ?? 0) - (call?.receivedAt ?? 0)).toBeGreaterThanOrEqual(195);
    expect(symbolsOf(venue, 's1')).toEqual(['AAPL']);
  });

  it('fails the next calls with failNextCalls, then answers normally', async () => {
    await using venue = await startVenueSim();
    await open(venue, 's1');
    venue.failNextCalls(2, 502);
    expect(await subscribe(venue, batch('s1', ['AAPL']))).toEqual({ status: 502, body: { code: 'INTERNAL' } });
    expect(await subscribe(venue, batch('s1', ['AAPL']), 'nobody')).toEqual({ status: 502, body: { code: 'INTERNAL' } });
    expect(symbolsOf(venue, 's1')).toEqual([]);
    expect(await subscribe(venue, batch('s1', ['AAPL']))).toMatchObject({ status: 200 });
    venue.failNextCalls(1);
    expect(await subscribe(venue, batch('s1', ['AAPL']))).toMatchObject({ status: 503 });
    expect(venue.calls().map((c) => c.code)).toEqual(['INTERNAL', 'INTERNAL', undefined, 'INTERNAL']);
  });

  it('answers 429 past the rate limit, per app key, and not once it is switched off', async () => {
    await using venue = await startVenueSim({ appKeys: [KEY, 'other-key'] });
    await open(venue, 's1');
    venue.setRateLimit({ perSecond: 0.001, burst: 2 });
    expect((await subscribe(venue, batch('s1', ['A']))).status).toBe(200);
    expect((await subscribe(venue, batch('s1', ['B']))).status).toBe(200);
    expect(await subscribe(venue, batch('s1', ['C']))).toEqual({ status: 429, body: { code: 'TOO_MANY_REQUESTS' } });
    expect((await subscribe(venue, batch('s1', ['C']), 'other-key')).body.code).toBe('INVALID_SESSION');
    expect(symbolsOf(venue, 's1')).toEqual(['A', 'B']);
    venue.setRateLimit(null);
    expect((await subscribe(venue, batch('s1', ['C']))).status).toBe(200);
  });
});
