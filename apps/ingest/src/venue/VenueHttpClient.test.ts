import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RateLimiter } from './RateLimiter.js';
import { VenueHttpClient } from './VenueHttpClient.js';
import type { VenueCallOptions } from './VenueHttpClient.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  appKey: string | undefined;
  contentType: string | undefined;
  body: unknown;
  at: number;
}

type Reply = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[];
let reply: Reply;

const json =
  (status: number, body: unknown): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
const raw =
  (status: number, text: string): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html' }).end(text);
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        appKey: req.headers['x-app-key'] as string | undefined,
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
        at: performance.now(),
      });
      reply(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
});

beforeEach(() => {
  seen = [];
  reply = json(200, { ok: true });
});

const roomy = () => new RateLimiter({ perSecond: 1_000, burst: 1_000 });
const opts: VenueCallOptions = { limiter: 'check', timeoutMs: 2_000 };

describe('VenueHttpClient requests', () => {
  it('subscribes with the app key and every kind by default', async () => {
    const client = new VenueHttpClient({ baseUrl, appKey: 'key-1', limiter: roomy() });
    expect(await client.subscribe('sess-1', ['BTC-USD', 'AAPL'], undefined, opts)).toEqual({ ok: true });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/v1/market-data/subscribe',
        appKey: 'key-1',
        contentType: 'application/json',
        body: { session_id: 'sess-1', symbols: ['BTC-USD', 'AAPL'], sub_types: ['SNAPSHOT', 'QUOTE', 'TICK'] },
        at: expect.any(Number) as number,
      },
    ]);
  });

  it('uses the configured kinds, a per-call override, and omits sub_types on a kind-less unsubscribe', async () => {
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: roomy(), kinds: ['quote'] });
    await client.subscribe('s', ['AAPL'], undefined, opts);
    await client.subscribe('s', ['AAPL'], ['snapshot', 'tick'], opts);
    await client.unsubscribe('s', ['AAPL'], undefined, opts);
    await client.unsubscribe('s', ['AAPL'], ['quote'], opts);
    expect(seen.map((s) => [s.url, s.body])).toEqual([
      ['/v1/market-data/subscribe', { session_id: 's', symbols: ['AAPL'], sub_types: ['QUOTE'] }],
      ['/v1/market-data/subscribe', { session_id: 's', symbols: ['AAPL'], sub_types: ['SNAPSHOT', 'TICK'] }],
      ['/v1/market-data/unsubscribe', { session_id: 's', symbols: ['AAPL'] }],
      ['/v1/market-data/unsubscribe', { session_id: 's', symbols: ['AAPL'], sub_types: ['QUOTE'] }],
    ]);
  });

  it('sends nothing, and spends no token, for an empty symbol list or an already-aborted signal', async () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1 });
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter });
    expect(await client.subscribe('s', [], undefined, opts)).toEqual({ ok: true });
    const aborted = await client.subscribe('s', ['AAPL'], undefined, { ...opts, signal: AbortSignal.abort() });
    expect(aborted).toMatchObject({ ok: false, error: { code: 'aborted', retryable: false } });
    expect(seen).toEqual([]);
    expect(limiter.tryTake()).toBe(true);
  });
});

describe('VenueHttpClient answers', () => {
  const cases: [string, Reply, Record<string, unknown>][] = [
    ['INVALID_SESSION', json(400, { code: 'INVALID_SESSION' }), { code: 'invalid_session', retryable: false }],
    [
      'INVALID_SYMBOL',
      json(400, { code: 'INVALID_SYMBOL', symbols: ['NOPE', 'GONE'] }),
      { code: 'invalid_symbols', retryable: false, symbols: ['NOPE', 'GONE'] },
    ],
    [
      'TOO_MANY_SYMBOLS',
      json(400, { code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 100 }),
      { code: 'too_many_symbols', retryable: false, limit: 100 },
    ],
    ['429 TOO_MANY_REQUESTS', json(429, { code: 'TOO_MANY_REQUESTS' }), { code: 'venue_rate_limited', retryable: true }],
    ['429 without a body', raw(429, ''), { code: 'venue_rate_limited', retryable: true }],
    ['401 INVALID_APP_KEY', json(401, { code: 'INVALID_APP_KEY' }), { code: 'invalid_app_key', status: 401, retryable: false }],
    [
      'INVALID_APP_KEY whose message quotes the key (left out: it ends up in logs)',
      json(401, { code: 'INVALID_APP_KEY', message: 'unknown key s3cr3t' }),
      { code: 'invalid_app_key', status: 401, retryable: false, message: expect.not.stringContaining('s3cr3t') as unknown },
    ],
    [
      '400 INVALID_PARAMETER',
      json(400, { code: 'INVALID_PARAMETER', message: 'symbols' }),
      { code: 'http_error', status: 400, venueCode: 'INVALID_PARAMETER', retryable: false },
    ],
    ['503 INTERNAL', json(503, { code: 'INTERNAL' }), { code: 'http_error', status: 503, venueCode: 'INTERNAL', retryable: true }],
    ['502 from a proxy', raw(502, '<html>bad gateway</html>'), { code: 'http_error', status: 502, retryable: true }],
    ['an unknown code', json(418, { code: 'TEAPOT' }), { code: 'http_error', status: 418, retryable: false }],
    ['200 not JSON', raw(200, 'ok!'), { code: 'garbage', retryable: true }],
    ['200 not {ok:true}', json(200, { ok: false }), { code: 'garbage', retryable: true }],
    ['INVALID_SYMBOL without symbols', json(400, { code: 'INVALID_SYMBOL' }), { code: 'garbage', retryable: true }],
  ];

  it.each(cases)('%s', async (_name, answer, expected) => {
    reply = answer;
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: roomy() });
    const result = await client.subscribe('s', ['AAPL'], undefined, opts);
    expect(result).toEqual({ ok: false, error: { ...expected, message: expect.any(String) as string } });
  });

  it('a venue that never answers is a timeout, within the deadline', async () => {
    // Never answered; the client's abort destroys its socket, so nothing is left for later tests.
    reply = () => undefined;
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: roomy() });
    const result = await withDeadline(client.subscribe('s', ['AAPL'], undefined, { ...opts, timeoutMs: 100 }), 2_000, 'timeout result');
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true } });
  });

  it('a caller abort in flight is aborted, not a timeout', async () => {
    reply = () => undefined;
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: roomy() });
    const controller = new AbortController();
    const pending = client.subscribe('s', ['AAPL'], undefined, { ...opts, timeoutMs: 10_000, signal: controller.signal });
    await waitFor(() => seen.length === 1, { timeoutMs: 2_000, intervalMs: 5, message: 'request reaches the server' });
    controller.abort();
    expect(await withDeadline(pending, 2_000, 'aborted result')).toMatchObject({ ok: false, error: { code: 'aborted', retryable: false } });
  });

  it('nobody listening is a transport error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new VenueHttpClient({ baseUrl: `http://127.0.0.1:${port}`, appKey: 'k', limiter: roomy() });
    const result = await client.subscribe('s', ['AAPL'], undefined, opts);
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'transport', retryable: true, message: expect.stringMatching(/ECONNREFUSED/) as string },
    });
  });
});

describe('VenueHttpClient rate limiting', () => {
  it("'check' fails fast without sending when no token is free", async () => {
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: new RateLimiter({ perSecond: 0.1, burst: 1 }) });
    expect(await client.subscribe('s', ['AAPL'], undefined, opts)).toEqual({ ok: true });
    const second = await client.subscribe('s', ['AAPL'], undefined, opts);
    expect(second).toMatchObject({ ok: false, error: { code: 'local_rate_limited', retryable: true } });
    expect(seen).toHaveLength(1);
  });

  it("'acquire' waits for a token and then sends", async () => {
    const started = performance.now();
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter: new RateLimiter({ perSecond: 20, burst: 1 }) });
    const acquire: VenueCallOptions = { limiter: 'acquire', timeoutMs: 2_000 };
    const results = await withDeadline(
      Promise.all([client.subscribe('s', ['AAPL'], undefined, acquire), client.subscribe('s', ['MSFT'], undefined, acquire)]),
      3_000,
      'both paced calls answer',
    );
    expect(results).toEqual([{ ok: true }, { ok: true }]);
    expect(seen.map((s) => (s.body as { symbols: string[] }).symbols)).toEqual([['AAPL'], ['MSFT']]);
    // One token per 50 ms from the limiter's creation: the second cannot have been sent before it was earned.
    expect((seen[1]?.at ?? 0) - started).toBeGreaterThanOrEqual(50);
  });

  it("'acquire' honours the caller's signal while queued, and never sends", async () => {
    const limiter = new RateLimiter({ perSecond: 0.1, burst: 1 });
    const client = new VenueHttpClient({ baseUrl, appKey: 'k', limiter });
    expect(await client.subscribe('s', ['AAPL'], undefined, { limiter: 'acquire', timeoutMs: 2_000 })).toEqual({ ok: true });
    const controller = new AbortController();
    const pending = client.subscribe('s', ['MSFT'], undefined, { limiter: 'acquire', timeoutMs: 2_000, signal: controller.signal });
    expect(limiter.waiting).toBe(1);
    controller.abort();
    expect(await withDeadline(pending, 1_000, 'aborted waiter')).toMatchObject({ ok: false, error: { code: 'aborted', retryable: false } });
    expect(limiter.waiting).toBe(0);
    expect(seen).toHaveLength(1);
  });
});
