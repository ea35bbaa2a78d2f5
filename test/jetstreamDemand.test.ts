import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { Redis } from 'ioredis';
import type { DemoRouter } from '@streamgate/auth';
import { INGEST_DEMAND_KEY, RedisDemandRegistry } from '@streamgate/demand';
import { defineStream } from '@streamgate/protocol';
import type { TokenIssuer } from '@streamgate/server';
import { ensureJetStream } from '@streamgate/server/jetstream';
import { spawnAuth, startNatsCluster, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, NatsCluster, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openFrameLog } from './support/frameLog.js';
import type { FrameLog } from './support/frameLog.js';
import { metricValue } from './support/startFleet.js';
import { spawnFileKeyRelay } from './support/spawnFileKeyRelay.js';
import { fileKeyTokens } from './support/fileKeyTokens.js';
import type { FileKeyTokens } from './support/fileKeyTokens.js';

/**
 * Demand for streams on a JetStream target (docs/protocol.md §17, "What stays in Redis"): such a
 * target has no Redis of its own, so relays and auth record it in the Redis ingest reads demand
 * from, RELAY_JETSTREAM_DEMAND_TARGET / AUTH_JETSTREAM_DEMAND_TARGET.
 */
const ISSUER = 'jetstream-demand-auth';
const AUDIENCE = 'jetstream-demand-relay';
const RELAY = 'relay-js-demand';
const task = defineStream<{ n: number }>('task');
const other = defineStream<{ n: number }>('other');
const DEMAND_TTL_MS = 1_500;

let demandRedis: RedisServer | undefined;
let otherRedis: RedisServer | undefined;
let nats: NatsCluster | undefined;
let auth: AppProcess | undefined;
let relay: RelayProcess | undefined;
let tokens: TokenIssuer;
let jetStreamTarget = '';
let keyFile: FileKeyTokens | undefined;
let demand: Redis;

beforeAll(async () => {
  [demandRedis, otherRedis, nats] = await Promise.all([startRedis(), startRedis(), startNatsCluster()]);
  jetStreamTarget = nats.jetStreamTarget('TASKS');
  const ensured = await ensureJetStream(await jetstreamManager(await nats.connect()), { stream: 'TASKS' });
  if (!ensured.ok) throw new Error(ensured.error.message);
  const keys = await fileKeyTokens({ kid: 'jetstream-demand-key', issuer: ISSUER, audience: AUDIENCE, redis: jetStreamTarget });
  keyFile = keys;
  tokens = keys.tokens;
  const demandUrl = demandRedis.url;
  [auth, relay] = await Promise.all([
    // Every token this auth mints names the JetStream target; `demo:auth-` streams are ingest-backed.
    spawnAuth({
      issuer: ISSUER,
      audience: AUDIENCE,
      redisUrl: jetStreamTarget,
      signingKeys: keys.signingKeysJson,
      env: {
        NODE_ENV: 'test',
        AUTH_DEMO_ROUTER: 'true',
        AUTH_DEMAND_PREFIXES: 'demo:auth-',
        AUTH_DEMAND_TTL_MS: '60000',
        AUTH_JETSTREAM_DEMAND_TARGET: demandUrl,
      },
    }),
    // Two Redis targets, so the demand target is named, and the other one must not get JetStream's demand.
    spawnFileKeyRelay({
      name: RELAY,
      issuer: ISSUER,
      audience: AUDIENCE,
      redisAllowlist: `${otherRedis.url},${demandUrl}`,
      jwksFile: keyFile?.jwksFile ?? '',
      env: {
        RELAY_JETSTREAM_ALLOWLIST: jetStreamTarget,
        RELAY_JETSTREAM_DEMAND_TARGET: demandUrl,
        RELAY_DEMAND_PREFIXES: 'task:',
        RELAY_DEMAND_INTERVAL_MS: '200',
        RELAY_DEMAND_TTL_MS: String(DEMAND_TTL_MS),
      },
    }),
  ]);
  demand = demandRedis.client();
}, 60_000);

afterAll(async () => {
  await relay?.service.stop();
  await auth?.service.stop();
  await nats?.stop();
  await Promise.all([demandRedis?.stop(), otherRedis?.stop()]);
  await keyFile?.remove();
});

async function redisNowMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** How long `stream` stays wanted from now in `client`'s demand set (Redis clock); null when absent. */
async function demandLeftMs(client: Redis, stream: string): Promise<number | null> {
  const score = await client.zscore(INGEST_DEMAND_KEY, stream);
  return score === null ? null : Number(score) - (await redisNowMs(client));
}

async function subscribed(log: FrameLog, sid: string): Promise<void> {
  await log.until((fs) => fs.some((f) => f.op === 'live' && f.sid === sid), `${sid} never went live`);
}

describe('demand for streams on a JetStream target', () => {
  it('is heartbeated by the relay into RELAY_JETSTREAM_DEMAND_TARGET with its own streams, over one connection, and lapses when the client leaves', async () => {
    if (relay === undefined || otherRedis === undefined) throw new Error('not started');
    const jobs = task.for('jobs.1').name;
    const local = task.for('local').name;
    const elsewhere = task.for('elsewhere').name;
    const log = await openFrameLog(relay.url);
    try {
      log.send({ op: 'subscribe', sid: 'j', token: (await tokens.issue(task.for('jobs.1'), { subject: 'alice' })).token });
      log.send({ op: 'subscribe', sid: 'o', token: (await tokens.issue(other.for('jobs.2'), { subject: 'alice' })).token });
      log.send({
        op: 'subscribe',
        sid: 'l',
        token: (await tokens.issue(task.for('local'), { subject: 'alice', redis: demandRedis?.url ?? '' })).token,
      });
      log.send({
        op: 'subscribe',
        sid: 'e',
        token: (await tokens.issue(task.for('elsewhere'), { subject: 'alice', redis: otherRedis.url })).token,
      });
      for (const sid of ['j', 'o', 'l', 'e']) await subscribed(log, sid);

      // What ingest reads: the JetStream stream is wanted in the demand Redis, beside that Redis's own.
      const registry = new RedisDemandRegistry(demand);
      // A heartbeat carries the streams subscribed when it was sent: one between the `j` and `l`
      // subscribes carries the JetStream stream alone, and the next carries both.
      await waitFor(
        async () => {
          const demanded = await registry.demanded();
          return demanded.has(jobs) && demanded.has(local);
        },
        { timeoutMs: 5_000, message: 'the JetStream stream never became wanted beside the demand Redis’s own' },
      );
      expect([...(await registry.demanded())].sort()).toEqual([jobs, local].sort());
      expect(await demandLeftMs(demand, jobs)).toBeGreaterThan(0);
      // The other Redis target holds its own stream's demand only; nothing outside the prefix anywhere.
      const others = otherRedis.client();
      await waitFor(async () => (await others.zscore(INGEST_DEMAND_KEY, elsewhere)) !== null, {
        timeoutMs: 5_000,
        message: 'the other Redis target never got its own stream’s demand',
      });
      expect(await others.zrange(INGEST_DEMAND_KEY, '0', '-1')).toEqual([elsewhere]);
      expect(await demand.zscore(INGEST_DEMAND_KEY, other.for('jobs.2').name)).toBeNull();

      // One heartbeat per Redis: the JetStream streams ride on the demand target's own connection.
      const clients = String(await demand.client('LIST'));
      expect(clients.split('\n').filter((line) => line.includes(`name=streamgate-relay-demand:${RELAY}`))).toHaveLength(1);
      const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
      expect(metricValue(metrics, 'streamgate_relay_demand_streams', `target="${demandRedis?.url ?? ''}"`)).toBe(2);
      expect(metricValue(metrics, 'streamgate_relay_demand_heartbeats_total', 'outcome="failed"')).toBe(0);

      // Still wanted while the client stays: each heartbeat pushes the expiry on.
      const first = Number(await demand.zscore(INGEST_DEMAND_KEY, jobs));
      await waitFor(async () => Number(await demand.zscore(INGEST_DEMAND_KEY, jobs)) > first, {
        timeoutMs: 5_000,
        message: 'the JetStream stream’s demand was never renewed',
      });
    } finally {
      log.close();
    }
    // Gone: no pod beats for it any more, and its demand lapses within one TTL. Strictly past: the
    // demand read counts a score equal to Redis's clock as still wanted (ZRANGEBYSCORE now +inf).
    await waitFor(async () => ((await demandLeftMs(demand, jobs)) ?? -1) < 0, {
      timeoutMs: DEMAND_TTL_MS + 5_000,
      message: 'the JetStream stream’s demand never lapsed after its client left',
    });
    expect((await new RedisDemandRegistry(demand).demanded()).has(jobs)).toBe(false);
  }, 30_000);

  it('is registered by the auth app in AUTH_JETSTREAM_DEMAND_TARGET when it mints a token naming the JetStream target', async () => {
    if (auth === undefined || relay === undefined) throw new Error('not started');
    const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${auth.httpUrl}/trpc` })] });
    const minted = await trpc.demo.token.query({ stream: 'auth-job', user: 'alice' });
    const claims = JSON.parse(Buffer.from(minted.token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { redis: string };
    expect(claims.redis).toBe(jetStreamTarget);
    // Registered at mint, before any relay sees a subscriber (the relay's prefix is task:, not demo:).
    await waitFor(async () => ((await demandLeftMs(demand, 'demo:auth-job')) ?? 0) > 50_000, {
      timeoutMs: 5_000,
      message: 'auth never registered the JetStream stream’s demand in the demand Redis',
    });
    expect(await otherRedis?.client().zscore(INGEST_DEMAND_KEY, 'demo:auth-job')).toBeNull();
    const metrics = await (await fetch(`${auth.httpUrl}/metrics`)).text();
    expect(metricValue(metrics, 'streamgate_auth_demand_registrations_total', 'outcome="registered"')).toBe(1);
    // And the relay takes the token: it names an allowlisted JetStream target.
    const log = await openFrameLog(relay.url);
    try {
      log.send({ op: 'subscribe', sid: 'a', token: minted.token });
      await subscribed(log, 'a');
    } finally {
      log.close();
    }
  }, 20_000);
});
