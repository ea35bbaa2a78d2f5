import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FeedAnswer } from './FeedError.js';
import { VenueFeed } from './VenueFeed.js';
import type { VenueCallResult, VenueHttpClient } from './VenueHttpClient.js';
import type { VenueNotice } from './VenueNotice.js';
import type { VenueSessionOptions } from './VenueSession.js';
import type { VenuePayload } from './venueSchemas.js';
import type { ShardSession } from './VenueShard.js';
import { SessionBudget } from './SessionBudget.js';

interface FakeSession extends ShardSession {
  readonly options: VenueSessionOptions;
  opened: number;
  closed: boolean;
  destroyed: boolean;
}

interface HttpCall {
  readonly op: 'subscribe' | 'unsubscribe';
  readonly sessionId: string;
  readonly symbols: readonly string[];
}

/** The venue in memory: MQTT sessions the test connects and drops, and HTTP answers by a rule. */
function fakeVenue() {
  const sessions: FakeSession[] = [];
  const calls: HttpCall[] = [];
  let rule: (call: HttpCall) => VenueCallResult = () => ({ ok: true });
  const answer = (op: HttpCall['op']) => (sessionId: string, symbols: readonly string[]) => {
    const call = { op, sessionId, symbols: [...symbols] };
    calls.push(call);
    return Promise.resolve(rule(call));
  };
  const http = { subscribe: answer('subscribe'), unsubscribe: answer('unsubscribe') } as unknown as VenueHttpClient;
  const openSession = (options: VenueSessionOptions): ShardSession => {
    const session: FakeSession = {
      options,
      opened: 0,
      closed: false,
      destroyed: false,
      open: () => void (session.opened += 1),
      close: () => {
        session.closed = true;
        return Promise.resolve();
      },
      destroy: () => void (session.destroyed = true),
    };
    sessions.push(session);
    return session;
  };
  const live = () => sessions.filter((s) => !s.closed && !s.destroyed);
  return {
    sessions,
    calls,
    http,
    openSession,
    live,
    answerWith: (next: (call: HttpCall) => VenueCallResult) => void (rule = next),
    connackAll: () => {
      for (const s of live()) if (s.opened > 0) s.options.onLinkUp();
    },
  };
}

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const quote = (symbol: string): VenuePayload => ({ kind: 'quote', symbol, seq: 1, ts: 1, bid: 1, ask: 2 });

function setup(over: { maxSymbolsPerSession?: number; venue?: string; sessions?: SessionBudget } = {}) {
  const venue = fakeVenue();
  const notices: VenueNotice[] = [];
  const payloads: VenuePayload[] = [];
  const feed = new VenueFeed({
    venue: over.venue ?? 'sim',
    mqttUrl: 'mqtt://venue',
    appKey: 'key',
    http: venue.http,
    kinds: ['quote'],
    maxSymbolsPerSession: over.maxSymbolsPerSession ?? 10,
    maxSessions: 3,
    ...(over.sessions === undefined ? {} : { sessions: over.sessions }),
    reassertIntervalMs: 10_000,
    reconcileTimeoutMs: 1_000,
    callTimeoutMs: 3_000,
    rejectedSymbolTtlMs: 60_000,
    coverageStaleMs: 5_000,
    connectTimeoutMs: 1_000,
    log,
    onNotice: (n) => notices.push(n),
    onPayload: (p) => payloads.push(p),
    openSession: venue.openSession,
  });
  feed.start();
  return { venue, feed, notices, payloads };
}

/** Settles the answer once fake time and the fake venue's replies have run. */
async function answered(pending: Promise<FeedAnswer>): Promise<FeedAnswer> {
  await vi.advanceTimersByTimeAsync(0);
  return pending;
}

describe('VenueFeed', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('subscribes only after CONNACK, then answers once the venue confirmed; payloads count as coverage', async () => {
    const { venue, feed, payloads } = setup();
    const pending = feed.subscribe(['AAA', 'BBB']);
    expect(venue.sessions).toHaveLength(1);
    expect(venue.sessions[0]?.opened).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    // The venue refuses a session id it has not accepted yet: nothing is sent before CONNACK.
    expect(venue.calls).toEqual([]);
    venue.connackAll();
    expect(await answered(pending)).toEqual({ ok: true });
    const sessionId = venue.sessions[0]?.options.sessionId ?? '';
    expect(venue.calls).toEqual([{ op: 'subscribe', sessionId, symbols: ['AAA', 'BBB'] }]);
    venue.sessions[0]?.options.onPayload(quote('AAA'));
    venue.sessions[0]?.options.onPayload(quote('ZZZ'));
    expect(payloads.map((p) => p.symbol)).toEqual(['AAA']);
    expect([...feed.covered()]).toEqual(['AAA']);
    expect(feed.status().shards).toEqual([
      { index: 0, sessionId, connected: true, symbols: 2, confirmed: 2, attempt: null, reassertFailures: 0 },
    ]);
    await feed.close();
  });

  it('spreads symbols over sessions by the ceiling and replays the whole list after a reconnect', async () => {
    const { venue, feed } = setup({ maxSymbolsPerSession: 2 });
    const pending = feed.subscribe(['A', 'B', 'C']);
    expect(venue.sessions).toHaveLength(2);
    venue.connackAll();
    expect(await answered(pending)).toEqual({ ok: true });
    const first = venue.sessions[0];
    if (first === undefined) throw new Error('no session');
    venue.calls.length = 0;
    first.options.onLinkDown({ code: 'closed', retryable: true, message: 'dropped' });
    expect(feed.status().shards[0]).toMatchObject({ connected: false, confirmed: 0 });
    first.options.onLinkUp();
    await vi.advanceTimersByTimeAsync(0);
    // The venue forgot the session's subscriptions with its connection: the whole list again.
    expect(venue.calls).toEqual([
      { op: 'subscribe', sessionId: first.options.sessionId, symbols: feed.status().shards[0] ? ['A', 'B'] : [] },
    ]);
    expect(feed.status().shards[0]).toMatchObject({ connected: true, confirmed: 2 });
    await feed.close();
  });

  it('names each session by an MQTT 3.1.1 client id (1–23 of [0-9a-zA-Z]), its own, kept across a reconnect, in every HTTP call', async () => {
    // The longest venue name the topology allows.
    const { venue, feed } = setup({ venue: 'a-very-long-venue-name_012345678', maxSymbolsPerSession: 2 });
    const pending = feed.subscribe(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(venue.sessions).toHaveLength(3);
    venue.connackAll();
    expect(await answered(pending)).toEqual({ ok: true });
    const ids = venue.sessions.map((s) => s.options.sessionId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-zA-Z]{1,23}$/);
    expect(new Set(ids).size).toBe(3);
    expect(feed.status().shards.map((sh) => sh.sessionId)).toEqual(ids);
    expect(new Set(venue.calls.map((c) => c.sessionId))).toEqual(new Set(ids));

    const first = venue.sessions[0];
    if (first === undefined) throw new Error('no session');
    venue.calls.length = 0;
    first.options.onLinkDown({ code: 'closed', retryable: true, message: 'dropped' });
    first.options.onLinkUp();
    await vi.advanceTimersByTimeAsync(0);
    // A redial is the same session to the venue: same id, and the replay names it.
    expect(venue.sessions).toHaveLength(3);
    expect(venue.calls.map((c) => c.sessionId)).toEqual([ids[0]]);
    await feed.close();
  });

  it('opens sessions only within a budget shared with another feed on the key, and takes one the other closes', async () => {
    const budget = new SessionBudget(3);
    const a = setup({ maxSymbolsPerSession: 2, sessions: budget });
    const b = setup({ maxSymbolsPerSession: 2, sessions: budget });
    const first = a.feed.subscribe(['A1', 'A2', 'A3', 'A4']);
    expect(a.venue.sessions).toHaveLength(2);
    const second = b.feed.subscribe(['B1', 'B2', 'B3', 'B4']);
    // Three between them, however many each would want alone.
    expect(b.venue.sessions).toHaveLength(1);
    a.venue.connackAll();
    b.venue.connackAll();
    expect(await answered(first)).toEqual({ ok: true });
    expect(await answered(second)).toMatchObject({ ok: false, error: { code: 'capacity', symbols: ['B3', 'B4'] } });
    expect(b.notices).toContainEqual(expect.objectContaining({ type: 'capacity', symbols: ['B3', 'B4'] }));

    await a.feed.close();
    expect(b.venue.sessions).toHaveLength(2);
    b.venue.connackAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(b.venue.calls.at(-1)).toMatchObject({ op: 'subscribe', symbols: ['B3', 'B4'] });
    expect(budget.free).toBe(1);
    await b.feed.close();
    expect(budget.free).toBe(3);
  });

  it('excludes a symbol the venue refuses, retries the rest at once, and tells the caller', async () => {
    const { venue, feed, notices } = setup();
    venue.answerWith((call) =>
      call.op === 'subscribe' && call.symbols.includes('BAD')
        ? { ok: false, error: { code: 'invalid_symbols', retryable: false, symbols: ['BAD'], message: 'INVALID_SYMBOL' } }
        : { ok: true },
    );
    const pending = feed.subscribe(['AAA', 'BAD']);
    venue.connackAll();
    const answer = await answered(pending);
    expect(answer).toMatchObject({ ok: false, error: { code: 'symbols_refused', symbols: ['BAD'] } });
    expect(venue.calls.map((c) => c.symbols)).toEqual([['AAA', 'BAD'], ['AAA']]);
    expect(notices.find((n) => n.type === 'refusal')).toMatchObject({ symbols: ['BAD'], reason: 'invalid_symbol' });
    expect(feed.status()).toMatchObject({ rejected: ['BAD'], shards: [{ confirmed: 1 }] });
    await feed.close();
  });

  it('lowers the ceiling on TOO_MANY_SYMBOLS and re-shards onto another session', async () => {
    const { venue, feed, notices } = setup({ maxSymbolsPerSession: 4 });
    venue.answerWith((call) =>
      call.op === 'subscribe' && call.symbols.length > 2
        ? { ok: false, error: { code: 'too_many_symbols', retryable: false, limit: 2, message: 'TOO_MANY_SYMBOLS' } }
        : { ok: true },
    );
    const pending = feed.subscribe(['A', 'B', 'C', 'D']);
    venue.connackAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(notices).toContainEqual({ type: 'ceiling_lowered', ceiling: 2 });
    expect(venue.sessions).toHaveLength(2);
    venue.connackAll();
    expect(await answered(pending)).toEqual({ ok: true });
    expect(feed.status()).toMatchObject({
      ceiling: 2,
      shards: [
        { symbols: 2, confirmed: 2 },
        { symbols: 2, confirmed: 2 },
      ],
    });
    await feed.close();
  });

  it('replaces a session whose payload sink throws, with a fresh id, and latches the notice', async () => {
    const { venue, feed, notices } = setup();
    const pending = feed.subscribe(['AAA']);
    venue.connackAll();
    await answered(pending);
    const old = venue.sessions[0];
    if (old === undefined) throw new Error('no session');
    old.options.onCallbackError('onPayload', new Error('sink broke'));
    expect(old.destroyed).toBe(true);
    expect(venue.sessions).toHaveLength(2);
    const fresh = venue.sessions[1];
    expect(fresh?.options.sessionId).not.toBe(old.options.sessionId);
    await vi.advanceTimersByTimeAsync(0);
    expect(fresh?.opened).toBe(1);
    // The old session's events are dropped: it is not the shard's any more.
    old.options.onLinkUp();
    expect(feed.status().shards[0]).toMatchObject({ sessionId: fresh?.options.sessionId, connected: false });
    fresh?.options.onCallbackError('onPayload', new Error('sink broke again'));
    expect(notices.filter((n) => n.type === 'shard_crashed')).toHaveLength(1);
    // A repeated crash backs the reopen off instead of reconnecting at once.
    await vi.advanceTimersByTimeAsync(0);
    expect(venue.sessions[2]?.opened).toBe(0);
    await feed.close();
  });

  it('refuses a bad symbol list whole, changing nothing, and answers every call after close', async () => {
    const { venue, feed } = setup();
    const answer = await feed.subscribe(['ok', 'not a symbol!', 42]);
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_symbols', retryable: false } });
    expect(feed.wantedSymbols()).toEqual([]);
    expect(venue.sessions).toHaveLength(0);
    await feed.close();
    expect(await feed.subscribe(['AAA'])).toMatchObject({ ok: false, error: { code: 'closed' } });
  });
});
