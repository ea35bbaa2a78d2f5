import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { relayClaimsSchema } from '@streamgate/protocol';
import type { InferRelayPayload, RelaySubscription } from '@streamgate/protocol';
import { createTokenIssuer, generateSigningKey, SigningKeySet } from '@streamgate/server';
import type { inferRouterOutputs } from '@trpc/server';
import { createAuthMetrics } from './createAuthMetrics.js';
import { createAuthServer, JWKS_PATH } from './createAuthServer.js';
import type { AuthServer } from './createAuthServer.js';
import { createDemoRouter } from './demoRouter.js';
import type { DemoEvent, DemoRouter } from './demoRouter.js';

const ISSUER = 'https://auth.test';
const AUDIENCE = 'streamgate-relay';

describe('createAuthServer over HTTP', () => {
  let server: AuthServer;
  let base = '';
  let client: ReturnType<typeof createTRPCClient<DemoRouter>>;

  beforeAll(async () => {
    const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k-new'), await generateSigningKey('EdDSA', 'k-old')]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const keys = loaded.keys;
    const issuer = createTokenIssuer({ keys, issuer: ISSUER, audience: AUDIENCE, redis: 'redis://127.0.0.1:6390' });
    const metrics = createAuthMetrics();
    const router = createDemoRouter({ issuer, observer: metrics.observer });
    server = await createAuthServer({ trpc: { router }, keys, metrics, host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${server.port}`;
    client = createTRPCClient<DemoRouter>({
      links: [httpBatchLink({ url: `${base}/trpc`, fetch: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(5000) }) })],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('issues a token that verifies against the JWKS fetched over HTTP', async () => {
    const sub = await client.demo.token.query({ stream: 'room-1', user: 'alice' });
    expectTypeOf(sub).toEqualTypeOf<RelaySubscription<DemoEvent>>();
    expect(sub.stream).toBe('demo:room-1');
    const jwks = createRemoteJWKSet(new URL(`${base}${JWKS_PATH}`), { timeoutDuration: 5000 });
    const { payload, protectedHeader } = await jwtVerify(sub.token, jwks, { issuer: ISSUER, audience: AUDIENCE });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: 'k-new', typ: 'JWT' });
    expect(relayClaimsSchema.parse(payload)).toMatchObject({ sub: 'alice', stream: 'demo:room-1', redis: 'redis://127.0.0.1:6390/0' });
    expect(sub.expiresAt).toBe((payload.exp ?? 0) * 1000);
  });

  it('refuses mallory with FORBIDDEN', async () => {
    const error: unknown = await client.demo.token.query({ stream: 'room-1', user: 'mallory' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<DemoRouter>).data?.code).toBe('FORBIDDEN');
    expect((error as TRPCClientError<DemoRouter>).message).toMatch(/mallory/);
  });

  it('rejects invalid input with BAD_REQUEST', async () => {
    await expect(client.demo.token.query({ stream: 'has space', user: 'alice' })).rejects.toMatchObject({
      data: { code: 'BAD_REQUEST' },
    });
  });

  it('serves the JWKS with both keys and a 60 s cache lifetime', async () => {
    const res = await fetch(`${base}${JWKS_PATH}`, { signal: AbortSignal.timeout(5000) });
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    const body = (await res.json()) as { keys: Array<{ kid: string; d?: string }> };
    expect(body.keys.map((k) => k.kid)).toEqual(['k-new', 'k-old']);
    expect(body.keys.every((k) => k.d === undefined)).toBe(true);
  });

  it('answers health checks, 404s unknown paths and counts requests, issues and denials', async () => {
    expect((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
    expect((await fetch(`${base}/nope`, { signal: AbortSignal.timeout(5000) })).status).toBe(404);
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    expect(text).toMatch(/^streamgate_auth_token_requests_total\{procedure="demo.token"\} 3$/m);
    expect(text).toMatch(/^streamgate_auth_tokens_issued_total\{procedure="demo.token"\} 1$/m);
    expect(text).toMatch(/^streamgate_auth_token_denials_total\{procedure="demo.token"\} 1$/m);
    expect(text).toMatch(/streamgate_auth_http_request_duration_seconds_count\{route="trpc",method="GET",status="200"\}/);
  });

  it('infers the payload type from the router type', () => {
    type Out = inferRouterOutputs<DemoRouter>['demo']['token'];
    expectTypeOf<Out>().toEqualTypeOf<RelaySubscription<DemoEvent>>();
    expectTypeOf<InferRelayPayload<Out>>().toEqualTypeOf<DemoEvent>();
  });
});

describe('createAuthServer lifecycle', () => {
  it('closes with keep-alive connections open, and is async-disposable', async () => {
    const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k')]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const issuer = createTokenIssuer({ keys: loaded.keys, issuer: ISSUER, audience: AUDIENCE, redis: 'redis://r' });
    let port = 0;
    {
      await using server = await createAuthServer({
        trpc: { router: createDemoRouter({ issuer }) },
        keys: loaded.keys,
        host: '127.0.0.1',
        port: 0,
      });
      port = server.port;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
    }
    await expect(fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).rejects.toThrow();
  });
});
