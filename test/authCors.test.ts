import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoRouter } from '@streamgate/auth';
import { generateSigningKey } from '@streamgate/server';
import { spawnAuth } from '@streamgate/testkit';
import type { AppProcess } from '@streamgate/testkit';

const APP_ORIGIN = 'http://localhost:5173';
const OTHER_ORIGIN = 'https://evil.example';
const TOKEN_INPUT = encodeURIComponent(JSON.stringify({ 0: { stream: 'ticks', user: 'alice' } }));
const BAD_INPUT = encodeURIComponent(JSON.stringify({ 0: { stream: 'has space', user: 'alice' } }));

/** The real auth process from source, with the demo router and whatever else `env` says. */
async function startAuth(env: Record<string, string>): Promise<AppProcess> {
  return spawnAuth({
    issuer: 'auth-cors-test',
    audience: 'streamgate-relay',
    // No demand prefixes: auth never connects to this Redis, it only names it in tokens.
    redisUrl: 'redis://127.0.0.1:6390/0',
    signingKeys: JSON.stringify([await generateSigningKey('ES256', 'cors-key')]),
    env: { AUTH_DEMO_ROUTER: 'true', ...env },
  });
}

/** What a browser sends before a cross-origin POST with a JSON body. */
function preflight(url: string, origin: string): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, trpc-accept' },
    signal: AbortSignal.timeout(5000),
  });
}

function allowHeaders(res: Response): Array<[string, string]> {
  return [...res.headers.entries()].filter(([name]) => name.startsWith('access-control-'));
}

describe('auth CORS over HTTP, with AUTH_CORS_ORIGINS set', () => {
  let auth: AppProcess;
  beforeAll(async () => {
    auth = await startAuth({ NODE_ENV: 'test', AUTH_CORS_ORIGINS: `${APP_ORIGIN},https://app.example.com`, AUTH_CORS_CREDENTIALS: 'true' });
  });
  afterAll(async () => {
    await auth?.service.stop();
  });

  it('answers a preflight from a configured origin with 204 and the allow headers', async () => {
    const res = await preflight(`${auth.httpUrl}/trpc/demo.token?batch=1`, APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')?.split(', ')).toEqual(
      expect.arrayContaining(['content-type', 'authorization', 'trpc-accept']),
    );
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('refuses a preflight from another origin with 403 and no allow headers', async () => {
    const res = await preflight(`${auth.httpUrl}/trpc/demo.token?batch=1`, OTHER_ORIGIN);
    expect(res.status).toBe(403);
    expect(allowHeaders(res)).toEqual([]);
    expect(await res.text()).toMatch(/origin https:\/\/evil\.example is not allowed \(AUTH_CORS_ORIGINS\)/);
  });

  it('gives a token to a tRPC client on the allowed origin, the response readable by its page', async () => {
    const seen: Response[] = [];
    const trpc = createTRPCClient<DemoRouter>({
      links: [
        httpBatchLink({
          url: `${auth.httpUrl}/trpc`,
          fetch: async (url, init) => {
            const res = await fetch(url, { ...init, headers: { ...init?.headers, origin: APP_ORIGIN }, signal: AbortSignal.timeout(5000) });
            seen.push(res.clone());
            return res;
          },
        }),
      ],
    });
    const sub = await trpc.demo.token.query({ stream: 'ticks', user: 'alice' });
    expect(sub.stream).toBe('demo:ticks');
    expect(seen.map((res) => res.headers.get('access-control-allow-origin'))).toEqual([APP_ORIGIN]);
    expect(seen[0]?.headers.get('access-control-allow-credentials')).toBe('true');
    expect(seen[0]?.headers.get('vary')?.split(', ')).toContain('Origin');
  });

  it('puts the header on a POST from the allowed origin and none on a GET from another', async () => {
    const post = await fetch(`${auth.httpUrl}/trpc/demo.token?batch=1`, {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ 0: { stream: 'ticks', user: 'alice' } }),
      signal: AbortSignal.timeout(5000),
    });
    // A query refuses POST; the page can still read why.
    expect(post.status).toBe(405);
    expect(post.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);

    const other = await fetch(`${auth.httpUrl}/trpc/demo.token?batch=1&input=${TOKEN_INPUT}`, {
      headers: { origin: OTHER_ORIGIN },
      signal: AbortSignal.timeout(5000),
    });
    expect(other.status).toBe(200);
    expect(allowHeaders(other)).toEqual([]);
    expect(other.headers.get('vary')?.split(', ')).toContain('Origin');
  });

  it('sends no stack trace in an error response outside development', async () => {
    const res = await fetch(`${auth.httpUrl}/trpc/demo.token?batch=1&input=${BAD_INPUT}`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain('BAD_REQUEST');
    expect(body).not.toContain('"stack"');
    expect(body).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('auth without AUTH_CORS_ORIGINS, in development', () => {
  let auth: AppProcess;
  beforeAll(async () => {
    auth = await startAuth({ NODE_ENV: 'development' });
  });
  afterAll(async () => {
    await auth?.service.stop();
  });

  it('sends no CORS header at all and refuses every preflight', async () => {
    const res = await preflight(`${auth.httpUrl}/trpc/demo.token?batch=1`, APP_ORIGIN);
    expect(res.status).toBe(403);
    expect(allowHeaders(res)).toEqual([]);
    expect(await res.text()).toMatch(/cross-origin requests are not enabled \(AUTH_CORS_ORIGINS\)/);
    const get = await fetch(`${auth.httpUrl}/trpc/demo.token?batch=1&input=${TOKEN_INPUT}`, {
      headers: { origin: APP_ORIGIN },
      signal: AbortSignal.timeout(5000),
    });
    expect(get.status).toBe(200);
    expect(allowHeaders(get)).toEqual([]);
    expect(get.headers.get('vary')).not.toMatch(/origin/i);
  });

  it('shows the stack trace in development, where it helps', async () => {
    const res = await fetch(`${auth.httpUrl}/trpc/demo.token?batch=1&input=${BAD_INPUT}`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('"stack"');
  });
});
