import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@streamgate/auth';
import type { DemoRouter, OpsRouter } from '@streamgate/auth';
import { OPS_STREAM_DEFAULT } from '@streamgate/ops';
import { generateSigningKey } from '@streamgate/server';
import { spawnAuth, spawnRelay, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openRawSocket } from './support/rawSocket.js';

const ISSUER = 'streamgate-ops-token-test';
const AUDIENCE = 'streamgate-relay';
const CREDENTIAL = `operator-${Math.random().toString(36).slice(2)}`;
const DASHBOARD_ORIGIN = 'http://dashboard.test:5173';

let redis: RedisServer;
let auth: AppProcess;
let relay: RelayProcess;

beforeAll(async () => {
  redis = await startRedis();
  const key = await generateSigningKey('ES256', 'ops-token-key');
  auth = await spawnAuth({
    issuer: ISSUER,
    audience: AUDIENCE,
    redisUrl: redis.url,
    signingKeys: JSON.stringify([key]),
    env: {
      NODE_ENV: 'test',
      // The demo's open door is on too: ops.token must not be reachable through it.
      AUTH_DEMO_ROUTER: 'true',
      AUTH_OPS_REDIS_URL: redis.url,
      AUTH_OPERATOR_CREDENTIAL_SHA256: sha256Hex(CREDENTIAL),
      AUTH_CORS_ORIGINS: DASHBOARD_ORIGIN,
    },
  });
  relay = await spawnRelay({
    name: 'ops-token-relay',
    authUrl: auth.httpUrl,
    issuer: ISSUER,
    audience: AUDIENCE,
    redisAllowlist: redis.url,
  });
  await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, { timeoutMs: 20_000, message: 'relay never ready' });
}, 60_000);

afterAll(async () => {
  await relay?.service.stop();
  await auth?.service.stop();
  await redis?.stop();
});

function opsClient(authorization?: string) {
  return createTRPCClient<OpsRouter>({
    links: [httpLink({ url: `${auth.httpUrl}/trpc`, headers: authorization === undefined ? {} : { authorization } })],
  });
}

async function refusalCode(promise: Promise<unknown>): Promise<string | undefined> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof TRPCClientError)) throw new Error(`expected a refusal, got ${JSON.stringify(error)}`);
  return (error as TRPCClientError<OpsRouter>).data?.code;
}

describe('ops.token across processes', () => {
  it('refuses a request without the operator credential and one with a wrong credential (UNAUTHORIZED)', async () => {
    expect(await refusalCode(opsClient().ops.token.query())).toBe('UNAUTHORIZED');
    expect(await refusalCode(opsClient(`Bearer ${CREDENTIAL}x`).ops.token.query())).toBe('UNAUTHORIZED');
    expect(await refusalCode(opsClient(`Basic ${Buffer.from(`operator:${CREDENTIAL}`).toString('base64')}`).ops.token.query())).toBe(
      'UNAUTHORIZED',
    );
    // The demo router names its own streams (demo:*): no user of it can get the ops stream.
    const demo = createTRPCClient<DemoRouter>({ links: [httpLink({ url: `${auth.httpUrl}/trpc` })] });
    expect((await demo.demo.token.query({ stream: OPS_STREAM_DEFAULT, user: 'alice' })).stream).toBe(`demo:${OPS_STREAM_DEFAULT}`);
  });

  it('lets the dashboard origin send the Authorization header (CORS preflight)', async () => {
    const res = await fetch(`${auth.httpUrl}/trpc/ops.token`, {
      method: 'OPTIONS',
      headers: { origin: DASHBOARD_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
    expect(res.headers.get('access-control-allow-headers')?.split(/,\s*/)).toContain('authorization');
  });

  it('gives the right credential a token the real relay accepts for the ops stream, and relays its entries', async () => {
    const sub = await opsClient(`Bearer ${CREDENTIAL}`).ops.token.query();
    expect(sub.stream).toBe(OPS_STREAM_DEFAULT);
    const socket = await openRawSocket(relay.url);
    try {
      socket.send(JSON.stringify({ op: 'subscribe', sid: 'ops', token: sub.token }));
      expect(await socket.next((f) => (f.op === 'subscribed' || f.op === 'error') && f.sid === 'ops')).toMatchObject({ op: 'subscribed' });
      const probe = String(await redis.client().xadd(OPS_STREAM_DEFAULT, '*', 'data', JSON.stringify({ probe: 'ops-token' })));
      // The auth service writes its own snapshots to this stream once a second: wait for the probe's id.
      expect(await socket.next((f) => f.op === 'event' && f.stream === OPS_STREAM_DEFAULT && f.id === probe)).toMatchObject({
        data: { probe: 'ops-token' },
      });
    } finally {
      socket.close();
    }
  });
});
