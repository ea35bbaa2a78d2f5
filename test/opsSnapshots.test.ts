import { randomBytes } from 'node:crypto';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@streamgate/auth';
import type { OpsRouter } from '@streamgate/auth';
import { OPS_SNAPSHOT_INTERVAL_MS, OPS_SNAPSHOT_MAX_BYTES, opsSnapshotSchema } from '@streamgate/ops';
import type { AuthSnapshot, OpsSnapshot, RelaySnapshot } from '@streamgate/ops';
import { generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { spawnAuth, spawnRelay, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openRawSocket } from './support/rawSocket.js';
import type { RawSocket } from './support/rawSocket.js';

const ISSUER = 'streamgate-ops-snapshots-test';
const AUDIENCE = 'streamgate-relay';
const OPS_STREAM = 'test:ops';
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const CREDENTIAL = `operator-${randomBytes(12).toString('hex')}`;
const DRAIN_WINDOW_MS = 4_000;

let redis: RedisServer;
let reader: Redis;
let signingKey: PrivateJwk;
let auth: AppProcess;
let relayA: RelayProcess;
let relayB: RelayProcess;
/** Every token the test was given: none may appear in a snapshot. */
const tokens: string[] = [];

interface Written {
  readonly raw: string;
  readonly snapshot: OpsSnapshot;
}

/** Every entry of the ops stream, parsed with the contract's schema (a failed parse fails the test). */
async function written(): Promise<Written[]> {
  const entries = await reader.xrange(OPS_STREAM, '-', '+');
  return entries.map(([, fields]) => {
    expect(fields[0]).toBe('data');
    const raw = fields[1] ?? '';
    return { raw, snapshot: opsSnapshotSchema.parse(JSON.parse(raw)) };
  });
}

function ofPod<K extends OpsSnapshot['kind']>(all: readonly Written[], kind: K, pod: string): Array<Extract<OpsSnapshot, { kind: K }>> {
  return all.map((w) => w.snapshot).filter((s): s is Extract<OpsSnapshot, { kind: K }> => s.kind === kind && s.pod === pod);
}

function opsClient(authorization?: string) {
  return createTRPCClient<OpsRouter>({
    links: [httpLink({ url: `${auth.httpUrl}/trpc`, headers: authorization === undefined ? {} : { authorization } })],
  });
}

async function opsToken(): Promise<string> {
  const { token } = await opsClient(`Bearer ${CREDENTIAL}`).ops.token.query();
  tokens.push(token);
  return token;
}

/** A socket subscribed to the ops stream through `relay`, with an ops.token token. */
async function opsSubscriber(relay: RelayProcess): Promise<RawSocket> {
  const socket = await openRawSocket(relay.url);
  socket.send(JSON.stringify({ op: 'subscribe', sid: 'ops', token: await opsToken() }));
  expect(await socket.next((f) => (f.op === 'subscribed' || f.op === 'error') && f.sid === 'ops')).toMatchObject({ op: 'subscribed' });
  return socket;
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

beforeAll(async () => {
  redis = await startRedis();
  // Passworded after start (testkit's readiness PING is unauthenticated): every process must bring its own.
  await redis.client().config('SET', 'requirepass', PASSWORD);
  reader = redis.client({ password: PASSWORD });
  signingKey = await generateSigningKey('ES256', 'ops-snapshot-key');
  const withPassword = redis.url.replace('redis://', `redis://:${PASSWORD}@`);
  auth = await spawnAuth({
    issuer: ISSUER,
    audience: AUDIENCE,
    redisUrl: redis.url,
    signingKeys: JSON.stringify([signingKey]),
    env: {
      NODE_ENV: 'test',
      AUTH_POD_NAME: 'auth-ops',
      AUTH_OPS_REDIS_URL: withPassword,
      AUTH_OPS_STREAM: OPS_STREAM,
      AUTH_OPERATOR_CREDENTIAL_SHA256: sha256Hex(CREDENTIAL),
    },
  });
  const relayEnv = { RELAY_REDIS_PASSWORD: PASSWORD, RELAY_OPS_STREAM: OPS_STREAM };
  const common = { authUrl: auth.httpUrl, issuer: ISSUER, audience: AUDIENCE, redisAllowlist: redis.url };
  [relayA, relayB] = await Promise.all([
    // A: the password in the ops URL. B: no credentials in it, so the relay's own (RELAY_REDIS_PASSWORD).
    spawnRelay({ ...common, name: 'relay-a', env: { ...relayEnv, RELAY_OPS_REDIS_URL: withPassword, RELAY_DRAIN_WINDOW_MS: '1000' } }),
    spawnRelay({
      ...common,
      name: 'relay-b',
      env: { ...relayEnv, RELAY_OPS_REDIS_URL: redis.url, RELAY_DRAIN_WINDOW_MS: String(DRAIN_WINDOW_MS) },
    }),
  ]);
  for (const relay of [relayA, relayB]) {
    await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, { timeoutMs: 20_000, message: 'relay never ready' });
  }
}, 90_000);

afterAll(async () => {
  await Promise.allSettled([relayA?.service.stop(), relayB?.service.stop()]);
  await auth?.service.stop();
  await redis?.stop();
});

describe('operations snapshots across processes', () => {
  it('each relay and the auth service publish a schema-valid snapshot once a second, under the size bound', async () => {
    const pods = [
      ['relay', 'relay-a'],
      ['relay', 'relay-b'],
      ['auth', 'auth-ops'],
    ] as const;
    const all = await waitFor(
      async () => {
        const now = await written();
        return pods.every(([kind, pod]) => ofPod(now, kind, pod).length >= 4) && now;
      },
      { timeoutMs: 20_000, message: 'not every pod published 4 snapshots' },
    );
    for (const { raw } of all) expect(new TextEncoder().encode(raw).length).toBeLessThanOrEqual(OPS_SNAPSHOT_MAX_BYTES);
    for (const [kind, pod] of pods) {
      const snapshots = ofPod(all, kind, pod);
      const gaps = snapshots.slice(1).map((s, i) => s.at - (snapshots[i]?.at ?? 0));
      const seqs = snapshots.map((s) => s.seq);
      expect({ pod, seqs }).toEqual({ pod, seqs: seqs.map((_, i) => (seqs[0] ?? 0) + i) });
      // The machine is shared: the median interval, not each one, is held to the second.
      expect(median(gaps)).toBeGreaterThan(OPS_SNAPSHOT_INTERVAL_MS * 0.8);
      expect(median(gaps)).toBeLessThan(OPS_SNAPSHOT_INTERVAL_MS * 1.3);
      expect(new Set(snapshots.map((s) => s.startedAt)).size).toBe(1);
    }
  });

  it('shows the real figures, read through the relay with an ops.token token: connections, subscriptions, deliveries, refusals, read mode', async () => {
    const N = 4;
    const sockets: RawSocket[] = [];
    try {
      for (let i = 0; i < N; i++) sockets.push(await opsSubscriber(relayA));
      const [first] = sockets;
      if (first === undefined) throw new Error('no socket');
      first.send(JSON.stringify({ op: 'subscribe', sid: 'bad', token: 'not-a-token' }));
      const refusal = await first.next((f) => f.op === 'error' && f.sid === 'bad');
      if (refusal.op !== 'error') throw new Error('expected an error frame');
      const refused = await opsClient('Bearer not-the-credential')
        .ops.token.query()
        .then(
          () => 'issued',
          () => 'refused',
        );
      expect(refused).toBe('refused');

      const snapshotsSeen = (kind: 'relay' | 'auth', pod: string): OpsSnapshot[] =>
        first.frames.flatMap((f) => {
          if (f.op !== 'event') return [];
          const parsed = opsSnapshotSchema.safeParse(f.data);
          return parsed.success && parsed.data.kind === kind && parsed.data.pod === pod ? [parsed.data] : [];
        });
      const relaySeen = await waitFor(
        () =>
          (snapshotsSeen('relay', 'relay-a') as RelaySnapshot[]).find(
            (s) => s.connections === N && (s.refusals[refusal.code] ?? 0) >= 1 && s.deliveriesPerSecond >= N,
          ),
        { timeoutMs: 15_000, message: `no relay-a snapshot through the relay with ${N} connections, the refusal and deliveries` },
      );
      expect(relaySeen).toMatchObject({
        ready: true,
        connections: N,
        subscriptions: N,
        streamsWatched: 1,
        drain: null,
        readModes: [{ target: `127.0.0.1:${redis.port}/0`, mode: expect.stringMatching(/^(notify|batch)$/) as string }],
      });
      expect(relaySeen.deliveriesTotal).toBeGreaterThanOrEqual(N);
      const authSeen = await waitFor(
        () =>
          (snapshotsSeen('auth', 'auth-ops') as AuthSnapshot[]).find(
            (s) => s.tokensIssuedTotal >= N && (s.refusals.UNAUTHORIZED ?? 0) >= 1,
          ),
        { timeoutMs: 15_000, message: 'no auth snapshot with the tokens issued and the refusal' },
      );
      expect(authSeen).toMatchObject({ ready: true, signingKeyIds: ['ops-snapshot-key'] });
    } finally {
      for (const s of sockets) s.close();
    }
  });

  it('shows a relay draining after SIGTERM, with connectionsAtStart and windowMs, until it exits with a last snapshot saying it drained', async () => {
    // Enough sockets that the last notice falls late in the window (all 8 within its first 30 %:
    // p = 0.3^8 < 1e-4), so the drain spans several snapshots.
    const M = 8;
    const sockets: RawSocket[] = [];
    for (let i = 0; i < M; i++) sockets.push(await opsSubscriber(relayB));
    await waitFor(async () => ofPod(await written(), 'relay', 'relay-b').some((s) => s.connections === M), {
      timeoutMs: 10_000,
      message: `relay-b never reported ${M} connections`,
    });
    relayB.service.signal('SIGTERM');
    const draining = await waitFor(async () => ofPod(await written(), 'relay', 'relay-b').find((s) => s.drain !== null), {
      timeoutMs: 10_000,
      message: 'relay-b never reported its drain',
    });
    expect(draining).toMatchObject({ ready: false, drain: { windowMs: DRAIN_WINDOW_MS, connectionsAtStart: M, outcome: null } });
    const closes = await Promise.all(sockets.map((s) => s.closed));
    expect(closes.map((c) => c.code)).toEqual(sockets.map(() => 4000));
    expect(await relayB.service.exited).toMatchObject({ code: 0 });

    const during = ofPod(await written(), 'relay', 'relay-b').filter((s) => s.drain !== null);
    const last = during.at(-1);
    // The last one, written as it exits, says how the drain ended; none before it does.
    expect(last).toMatchObject({ connections: 0, drain: { ...draining.drain, outcome: 'drained' } });
    expect(during.slice(0, -1).map((s) => s.drain?.outcome)).toEqual(during.slice(0, -1).map(() => null));
    // Published on during the drain, not only at its start and end.
    expect(during.length).toBeGreaterThanOrEqual(2);
    // Connections only fall during a drain (new ones are sent on with 4002).
    const left = during.map((s) => s.connections);
    expect(left).toEqual([...left].sort((a, b) => b - a));
    expect(left[0]).toBeLessThanOrEqual(M);
  });

  it('writes a last auth snapshot saying not ready on SIGTERM, and auth exits 0', async () => {
    auth.service.signal('SIGTERM');
    expect(await auth.service.exited).toMatchObject({ code: 0 });
    const last = ofPod(await written(), 'auth', 'auth-ops').at(-1);
    expect(last).toMatchObject({ ready: false });
  });

  it('holds no secret: not the Redis password, not the signing key material, not a token, not the operator credential', async () => {
    const text = (await written()).map((w) => w.raw).join('\n');
    expect(text.length).toBeGreaterThan(0);
    expect(tokens.length).toBeGreaterThan(0);
    const secrets = [PASSWORD, signingKey.d, CREDENTIAL, sha256Hex(CREDENTIAL), ...tokens, ...tokens.map((t) => t.split('.')[2] ?? t)];
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text.includes(secret)).toBe(false);
    }
  });
});
