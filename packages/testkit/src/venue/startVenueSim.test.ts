import { afterEach, describe, expect, it } from 'vitest';
import { ConnackRefused, ALL_SUB_TYPES, postJson, sessionTracker, SIM_APP_KEY } from '../__fixtures__/venueSession.js';
import type { ReceivedPayload } from '../__fixtures__/venueSession.js';
import { waitFor } from '../waitFor.js';
import { startVenueSim } from './startVenueSim.js';
import type { VenueSim } from './startVenueSim.js';

const KEY = SIM_APP_KEY;
const ALL = ALL_SUB_TYPES;
const sessions = sessionTracker();
const open = sessions.open;

function subscribe(venue: VenueSim, sessionId: string, symbols: string[], subTypes = ALL) {
  return postJson(`${venue.httpUrl}/v1/market-data/subscribe`, { session_id: sessionId, symbols, sub_types: subTypes }, KEY);
}

const refusalCode = async (attempt: Promise<unknown>): Promise<number | undefined> => {
  const error: unknown = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnackRefused);
  return (error as ConnackRefused).code;
};

const typesOf = (payload: ReceivedPayload | undefined, ...fields: string[]) => fields.map((field) => typeof payload?.[field]);

afterEach(() => sessions.endAll());

describe('startVenueSim: sessions', () => {
  it('registers a session once its CONNACK is sent and forgets it on disconnect', async () => {
    await using venue = await startVenueSim();
    expect(venue.mqttPort).not.toBe(1883);
    expect(venue.sessions()).toEqual([]);
    const session = await open(venue, 's1');
    expect(venue.sessions()).toEqual([{ id: 's1', appKey: KEY, connected: true, subscribed: [], silenced: false }]);
    await session.end();
    await waitFor(() => venue.sessions().length === 0, { timeoutMs: 5_000, message: 'session forgotten after DISCONNECT' });
  });

  it('refuses an unknown app key with bad username or password', async () => {
    await using venue = await startVenueSim();
    expect(await refusalCode(open(venue, 's1', 'nobody'))).toBe(4);
    expect(venue.sessions()).toEqual([]);
  });

  it('with strictClientIds, refuses a client id MQTT 3.1.1 does not guarantee (return code 2)', async () => {
    await using venue = await startVenueSim({ strictClientIds: true });
    expect(await refusalCode(open(venue, 'sim-0-3f9c2a1b'))).toBe(2);
    expect(await refusalCode(open(venue, 'a'.repeat(24)))).toBe(2);
    await open(venue, 'a'.repeat(23));
    expect(venue.sessions().map((s) => s.id)).toEqual(['a'.repeat(23)]);
    expect(venue.refusedConnects().map((r) => r.returnCode)).toEqual([2, 2]);
  });

  it('refuses a 6th concurrent session for one key, but not a takeover of a live id', async () => {
    await using venue = await startVenueSim({ appKeys: [KEY, 'other-key'] });
    const five = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => open(venue, id)));
    expect(await refusalCode(open(venue, 'f'))).toBe(5);
    expect(venue.refusedConnects()).toMatchObject([{ clientId: 'f', appKey: KEY, returnCode: 5 }]);
    // Another key has its own five.
    await open(venue, 'g', 'other-key');
    // Reusing a live client id replaces that connection (standard MQTT), so it is not a 6th.
    await open(venue, 'a');
    await waitFor(() => five[0]?.closed() === true, { timeoutMs: 5_000, message: 'taken-over connection closed' });
    expect(
      venue
        .sessions()
        .filter((s) => s.appKey === KEY)
        .map((s) => s.id)
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd', 'e']);
    await five[1]?.end();
    await waitFor(() => venue.session('b') === undefined, { timeoutMs: 5_000, message: 'b forgotten' });
    await open(venue, 'f');
  });

  it('refuses CONNECTs of one key with the code refuseConnects sets, while its HTTP calls and live sessions carry on', async () => {
    await using venue = await startVenueSim({ appKeys: [KEY, 'other-key'] });
    await open(venue, 's1');
    venue.refuseConnects(KEY, 4);
    expect(await refusalCode(open(venue, 's2'))).toBe(4);
    expect((await subscribe(venue, 's1', ['AAPL'])).status).toBe(200);
    await open(venue, 'o1', 'other-key');
    expect(await postJson(`${venue.httpUrl}/sim/faults`, { fault: 'refuseConnects', appKey: KEY, returnCode: 3 })).toMatchObject({
      status: 200,
    });
    expect(await refusalCode(open(venue, 's2'))).toBe(3);
    expect(await postJson(`${venue.httpUrl}/sim/faults`, { fault: 'refuseConnects', appKey: KEY, returnCode: 0 })).toMatchObject({
      status: 400,
      body: { field: 'returnCode' },
    });
    venue.refuseConnects(KEY, null);
    await open(venue, 's2');
    expect(venue.refusedConnects().map((r) => [r.clientId, r.returnCode])).toEqual([
      ['s2', 4],
      ['s2', 3],
    ]);
    expect(venue.sessions().map((s) => s.id)).toEqual(['s1', 'o1', 's2']);
  });

  it('holds the CONNACK for setConnackDelay and registers the session only after it', async () => {
    await using venue = await startVenueSim();
    venue.setConnackDelay(300);
    const startedAt = Date.now();
    let connackAt: number | undefined;
    const pending = open(venue, 's1').then((session) => {
      connackAt = Date.now();
      return session;
    });
    // Sampled while the CONNACK is held back (well before it is due), the venue must not know the session.
    const early: boolean[] = [];
    await waitFor(
      () => {
        if (Date.now() - startedAt < 200) early.push(venue.session('s1') !== undefined);
        return connackAt !== undefined;
      },
      { timeoutMs: 5_000, intervalMs: 10, message: 'delayed CONNACK arrived' },
    );
    await pending;
    expect(early.length).toBeGreaterThan(0);
    expect(early.some(Boolean)).toBe(false);
    expect((connackAt ?? 0) - startedAt).toBeGreaterThanOrEqual(290);
    expect(venue.session('s1')?.connected).toBe(true);
  });

  it('closes idempotently and frees both ports', async () => {
    const venue = await startVenueSim();
    const session = await open(venue, 's1');
    await Promise.all([venue.close(), venue.close()]);
    await venue.close();
    await waitFor(() => session.closed(), { timeoutMs: 5_000, message: 'client saw the venue go' });
    await expect(fetch(`${venue.httpUrl}/v1/market-data/subscribe`, { method: 'POST' })).rejects.toThrow();
  });
});

describe('startVenueSim: data', () => {
  it('publishes each subscribed (symbol, kind) to that session only, with increasing seq', async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 20 });
    const s1 = await open(venue, 's1');
    const s2 = await open(venue, 's2');
    expect(await subscribe(venue, 's1', ['BTC-USD', 'AAPL'], ['SNAPSHOT', 'QUOTE'])).toEqual({ status: 200, body: { ok: true } });
    await subscribe(venue, 's2', ['ETH-USD'], ['TICK']);
    const topics = () => new Set(s1.received.map((p) => p.topic));
    await waitFor(() => topics().size === 4, { timeoutMs: 5_000, message: 's1 received all four streams' });
    expect([...topics()].sort()).toEqual(['quote/AAPL', 'quote/BTC-USD', 'snapshot/AAPL', 'snapshot/BTC-USD']);
    await waitFor(() => s2.received.length >= 3, { timeoutMs: 5_000, message: 's2 received ticks' });
    expect(new Set(s2.received.map((p) => p.topic))).toEqual(new Set(['tick/ETH-USD']));

    const btcQuotes = s1.received.filter((p) => p.topic === 'quote/BTC-USD');
    const seqs = btcQuotes.map((p) => p.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(btcQuotes[0]).toMatchObject({ symbol: 'BTC-USD', kind: 'quote' });
    expect(typesOf(btcQuotes[0], 'bid', 'ask', 'ts')).toEqual(['number', 'number', 'number']);
    expect(
      typesOf(
        s1.received.find((p) => p.kind === 'snapshot'),
        'price',
      ),
    ).toEqual(['number']);
    expect(s2.received[0]).toMatchObject({ symbol: 'ETH-USD', kind: 'tick' });
    expect(typesOf(s2.received[0], 'price', 'size')).toEqual(['number', 'number']);
    expect(s1.garbage).toEqual([]);
    expect(venue.published().bySession.s1).toBeGreaterThan(0);
  });

  it("continues a symbol's seq when it moves to another session", async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 20 });
    const s1 = await open(venue, 's1');
    const s2 = await open(venue, 's2');
    await subscribe(venue, 's1', ['AAPL'], ['QUOTE']);
    await waitFor(() => s1.received.length >= 3, { timeoutMs: 5_000, message: 's1 received quotes' });
    await postJson(`${venue.httpUrl}/v1/market-data/unsubscribe`, { session_id: 's1', symbols: ['AAPL'] }, KEY);
    const lastOnS1 = Math.max(...s1.received.map((p) => p.seq));
    await subscribe(venue, 's2', ['AAPL'], ['QUOTE']);
    await waitFor(() => s2.received.length >= 1, { timeoutMs: 5_000, message: 's2 received quotes' });
    expect(s2.received[0]?.seq).toBeGreaterThan(lastOnS1);
  });

  it('publishes only the kinds the venue is configured to publish', async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 20, kinds: ['snapshot', 'quote'] });
    const s1 = await open(venue, 's1');
    await subscribe(venue, 's1', ['BTC-USD']);
    await waitFor(() => s1.received.length >= 10, { timeoutMs: 5_000, message: 'payloads arrived' });
    expect(s1.received.some((p) => p.kind === 'tick')).toBe(false);
  });

  it('silence stops payloads to a session until its next subscribe', async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 20 });
    const s1 = await open(venue, 's1');
    await subscribe(venue, 's1', ['AAPL'], ['QUOTE']);
    await waitFor(() => s1.received.length >= 2, { timeoutMs: 5_000, message: 'quotes before silence' });
    expect(venue.silence('s1')).toBe(true);
    expect(venue.session('s1')).toMatchObject({ connected: true, silenced: true });
    // Rounds already handed to the socket may still land; after that, nothing.
    const roundsAt = venue.published().rounds;
    await waitFor(() => venue.published().rounds >= roundsAt + 2, { timeoutMs: 5_000, message: 'two rounds passed' });
    const heard = s1.received.length;
    await waitFor(() => venue.published().rounds >= roundsAt + 10, { timeoutMs: 5_000, message: 'ten rounds passed' });
    expect(s1.received.length).toBe(heard);
    expect(s1.closed()).toBe(false);
    expect(await subscribe(venue, 's1', ['AAPL'], ['QUOTE'])).toMatchObject({ status: 200 });
    expect(venue.session('s1')?.silenced).toBe(false);
    await waitFor(() => s1.received.length > heard, { timeoutMs: 5_000, message: 'quotes after the resubscribe' });
  });
});

describe('startVenueSim: session faults', () => {
  it('dropSession closes the connection and forgets its subscriptions', async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 20 });
    const s1 = await open(venue, 's1');
    await subscribe(venue, 's1', ['AAPL']);
    expect(venue.dropSession('s1')).toBe(true);
    expect(venue.session('s1')).toBeUndefined();
    await waitFor(() => s1.closed(), { timeoutMs: 5_000, message: 'client saw the drop' });
    expect(venue.dropSession('s1')).toBe(false);
    expect(await subscribe(venue, 's1', ['AAPL'])).toEqual({ status: 400, body: { code: 'INVALID_SESSION' } });
    // Coming back under the same id starts from nothing: subscriptions are not restored.
    const again = await open(venue, 's1');
    expect(venue.session('s1')?.subscribed).toEqual([]);
    const roundsAt = venue.published().rounds;
    await waitFor(() => venue.published().rounds >= roundsAt + 5, { timeoutMs: 5_000, message: 'five rounds passed' });
    expect(again.received).toEqual([]);
  });

  it('crashSocket resets the TCP connection without a DISCONNECT', async () => {
    await using venue = await startVenueSim();
    const s1 = await open(venue, 's1');
    await subscribe(venue, 's1', ['AAPL']);
    expect(venue.crashSocket('s1')).toBe(true);
    expect(venue.sessions()).toEqual([]);
    await waitFor(() => s1.closed(), { timeoutMs: 5_000, message: 'client saw the reset' });
    expect(s1.errors.map((e) => e.message).join()).toMatch(/ECONNRESET/);
    expect(venue.crashSocket('nobody')).toBe(false);
  });

  it('applies faults posted to /sim/faults and names the field of a bad one', async () => {
    await using venue = await startVenueSim();
    const s1 = await open(venue, 's1');
    const fault = (body: unknown) => postJson(`${venue.httpUrl}/sim/faults`, body);
    expect(await fault({ fault: 'setUnknownSymbols', symbols: ['AAPL'] })).toEqual({ status: 200, body: { ok: true } });
    expect((await subscribe(venue, 's1', ['AAPL'])).body.code).toBe('INVALID_SYMBOL');
    expect(await fault({ fault: 'setUnknownSymbols', symbols: [] })).toMatchObject({ status: 200 });
    expect((await subscribe(venue, 's1', ['AAPL'])).status).toBe(200);
    expect(await fault({ fault: 'silence', sessionId: 's1' })).toEqual({ status: 200, body: { ok: true, found: true } });
    expect(venue.session('s1')?.silenced).toBe(true);
    expect(await fault({ fault: 'failNextCalls', count: 1, status: 500 })).toMatchObject({ status: 200 });
    expect((await subscribe(venue, 's1', ['AAPL'])).status).toBe(500);
    expect(await fault({ fault: 'setRateLimit', rateLimit: { perSecond: 5, burst: 1 } })).toMatchObject({ status: 200 });
    expect(await fault({ fault: 'setRateLimit', rateLimit: null })).toMatchObject({ status: 200 });
    expect(await fault({ fault: 'setSymbolCeiling', limit: 0 })).toMatchObject({ status: 200 });
    expect((await subscribe(venue, 's1', ['MSFT'])).body).toEqual({ code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 0 });
    expect(await fault({ fault: 'dropSession', sessionId: 's1' })).toEqual({ status: 200, body: { ok: true, found: true } });
    await waitFor(() => s1.closed(), { timeoutMs: 5_000, message: 'client saw the drop' });
    expect(await fault({ fault: 'crashSocket', sessionId: 's1' })).toEqual({ status: 200, body: { ok: true, found: false } });

    const refused: [unknown, string][] = [
      ['{not json', 'body'],
      [{ fault: 'meteor' }, 'fault'],
      [{ fault: 'dropSession' }, 'sessionId'],
      [{ fault: 'setUnknownSymbols', symbols: 'AAPL' }, 'symbols'],
      [{ fault: 'setSymbolCeiling', limit: -1 }, 'limit'],
      [{ fault: 'setResponseDelay', ms: 'slow' }, 'ms'],
      [{ fault: 'failNextCalls', count: 1, status: 200 }, 'status'],
      [{ fault: 'setRateLimit', rateLimit: { perSecond: 0, burst: 1 } }, 'rateLimit.perSecond'],
    ];
    for (const [body, field] of refused) {
      const answer = await fault(body);
      expect(answer, JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'INVALID_PARAMETER', field } });
    }
    // Control calls are not venue calls.
    expect(venue.calls().map((c) => c.code)).toEqual(['INVALID_SYMBOL', undefined, 'INTERNAL', 'TOO_MANY_SYMBOLS_SUBSCRIPTION']);
  });
});
