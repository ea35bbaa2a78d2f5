import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { defineStream, jetStreamSequence, jetStreamSubject } from '@streamgate/protocol';
import { createPublisher } from '@streamgate/server';
import type { TokenIssuer } from '@streamgate/server';
import { ensureJetStream } from '@streamgate/server/jetstream';
import { spawnIngest, startAnvil, startFaultProxy, startNatsCluster, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, NatsCluster, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openFrameLog } from './support/frameLog.js';
import { FAST_WORKER_ENV, holdDemand, testChain } from './support/ingestHarness.js';
import { auditBlocks, readJetStreamEvents } from './support/jetStreamIngestEvents.js';
import { mineEvery } from './support/mineEvery.js';
import { probeSubscribe } from './support/probeSubscribe.js';
import { spawnFileKeyRelay } from './support/spawnFileKeyRelay.js';
import { fileKeyTokens } from './support/fileKeyTokens.js';
import type { FileKeyTokens } from './support/fileKeyTokens.js';

/*
 * Every component that takes NATS credentials, against a 3-node JetStream cluster that requires a
 * login: the publisher (natsUsername / natsPassword) and a relay (RELAY_NATS_USERNAME /
 * RELAY_NATS_PASSWORD), each with the right password and with a wrong one, and an ingest worker
 * (INGEST_NATS_USERNAME / INGEST_NATS_PASSWORD). A wrong password must end in a typed answer,
 * never a crash, and never in a log line.
 */

const USER = 'streamgate';
const PASSWORD = 'nats-right-pw-5e1b';
const WRONG = 'nats-wrong-pw-c07d';
const JETSTREAM = 'CREDS';
const ISSUER = 'jetstream-credentials';
const AUDIENCE = 'jetstream-credentials-relay';
const task = defineStream<{ n: number }>('task');

let redis: RedisServer | undefined;
let nats: NatsCluster | undefined;
let anvil: AnvilNode | undefined;
let proxy: FaultProxy | undefined;
let jsm: JetStreamManager;
let tokens: TokenIssuer;
let keyFile: FileKeyTokens | undefined;
/** The cluster by its seeds, as tokens and the allowlist name it (no credentials: §17). */
let target = '';
const relays: RelayProcess[] = [];
const workers: AppProcess[] = [];

beforeAll(async () => {
  [redis, nats, anvil] = await Promise.all([
    startRedis(),
    startNatsCluster({ auth: { username: USER, password: PASSWORD } }),
    startAnvil(),
  ]);
  proxy = await startFaultProxy(anvil);
  target = nats.jetStreamTarget(JETSTREAM);
  jsm = await jetstreamManager(await nats.connect());
  const created = await ensureJetStream(jsm, { stream: JETSTREAM }, { replicas: 3 });
  if (!created.ok) throw new Error(created.error.message);
  keyFile = await fileKeyTokens({ kid: 'credentials-key', issuer: ISSUER, audience: AUDIENCE, redis: redis.url });
  tokens = keyFile.tokens;
}, 60_000);

afterAll(async () => {
  await Promise.all([...relays, ...workers].map((process) => process.service.stop()));
  await proxy?.close();
  await Promise.all([nats?.stop(), redis?.stop(), anvil?.stop()]);
  await keyFile?.remove();
});

async function startRelay(name: string, password: string): Promise<RelayProcess> {
  const relay = await spawnFileKeyRelay({
    name,
    issuer: ISSUER,
    audience: AUDIENCE,
    redisAllowlist: redis?.url ?? '',
    jwksFile: keyFile?.jwksFile ?? '',
    env: {
      RELAY_JETSTREAM_ALLOWLIST: target,
      RELAY_NATS_USERNAME: USER,
      RELAY_NATS_PASSWORD: password,
      RELAY_REDIS_DOWN_AFTER_MS: '1000',
    },
  });
  relays.push(relay);
  return relay;
}

const lastSequence = async (): Promise<number> => (await jsm.streams.info(JETSTREAM)).state.last_seq;

async function tokenFor(stream: string): Promise<string> {
  return (await tokens.issue(task.for(stream), { subject: 'alice', redis: target })).token;
}

describe('JetStream targets behind a NATS login', () => {
  it('createPublisher with natsUsername / natsPassword stores the entry; with a wrong password it answers a typed error', async () => {
    const publisher = createPublisher({ targets: target, natsUsername: USER, natsPassword: PASSWORD });
    try {
      const result = await publisher.publish(task.for('pub'), { n: 1 });
      if (!result.ok) throw new Error(`publish with the right password failed: ${result.error.code}: ${result.error.message}`);
      const stored = await jsm.streams.getMessage(JETSTREAM, { seq: jetStreamSequence(result.id) ?? 0 });
      expect(stored?.subject).toBe(jetStreamSubject(JETSTREAM, task.for('pub').name));
      expect(stored?.json()).toEqual({ n: 1 });
    } finally {
      await publisher.close();
    }

    const before = await lastSequence();
    const wrong = createPublisher({ targets: target, natsUsername: USER, natsPassword: WRONG });
    try {
      for (const n of [2, 3]) {
        const refused = await wrong.publish(task.for('pub'), { n });
        if (refused.ok) throw new Error(`a publish with a wrong password was stored as ${refused.id}`);
        // A refused login is configuration to fix: not retryable, nothing written.
        expect(refused.error).toMatchObject({ code: 'redis_rejected', retryable: false, written: 'no' });
        expect(refused.error.message).toMatch(/authorization violation/i);
        expect(refused.error.message).not.toContain(WRONG);
      }
    } finally {
      await wrong.close();
    }
    expect(await lastSequence()).toBe(before);
  }, 20_000);

  it('a relay with RELAY_NATS_USERNAME / RELAY_NATS_PASSWORD delivers; with a wrong password the target is down, subscribes are refused, and no log holds a password', async () => {
    const [good, bad] = await Promise.all([startRelay('relay-nats-login', PASSWORD), startRelay('relay-nats-wrong', WRONG)]);

    const log = await openFrameLog(good.url);
    const publisher = createPublisher({ targets: target, natsUsername: USER, natsPassword: PASSWORD });
    try {
      log.send({ op: 'subscribe', sid: 's', token: await tokenFor('relayed') });
      await log.until(
        (fs) => fs.some((f) => f.op === 'live' && f.sid === 's'),
        'the relay with the login never went live on the JetStream stream',
        10_000,
      );
      const published = await publisher.publish(task.for('relayed'), { n: 7 });
      if (!published.ok) throw new Error(`${published.error.code}: ${published.error.message}`);
      await log.until(
        (fs) => fs.some((f) => f.op === 'event' && f.id === published.id),
        `the relay with the login never delivered ${published.id}`,
        5_000,
      );
      expect(log.frames.filter((f) => f.op === 'event').map((f) => f.data)).toEqual([{ n: 7 }]);
      expect(await (await fetch(`${good.httpUrl}/readyz`)).text()).toContain(`${target} up`);
    } finally {
      log.close();
      await publisher.close();
    }

    // The Redis target still answers, so the pod stays ready (§8, one target down) with this one down.
    const readyz = await waitFor(
      async () => {
        const response = await fetch(`${bad.httpUrl}/readyz`);
        const body = await response.text();
        return body.includes(`${target} down`) && { status: response.status, body };
      },
      { timeoutMs: 10_000, message: 'the relay with a wrong NATS password never reported its JetStream target down on /readyz' },
    );
    expect(readyz.status).toBe(200);
    expect(await probeSubscribe(bad.url, await tokenFor('refused'))).toMatchObject({
      op: 'error',
      sid: 'probe',
      code: 'stream_unavailable',
      retryable: true,
    });

    // The refusal is logged (so the check below looked at a log that speaks of the login) ...
    expect(bad.service.lines.some((line) => /authorization violation/i.test(line))).toBe(true);
    // ... and neither relay ever printed a password, its own or the other's.
    for (const relay of [good, bad]) {
      expect(relay.service.lines.filter((line) => line.includes(PASSWORD) || line.includes(WRONG))).toEqual([]);
    }
  }, 20_000);

  it('an ingest worker with INGEST_NATS_USERNAME / INGEST_NATS_PASSWORD writes every block once, and logs no password', async () => {
    const chain = anvil;
    if (redis === undefined || chain === undefined || proxy === undefined) throw new Error('beforeAll did not start Redis and anvil');
    const stream = 'evm:anvil:creds';
    const worker = await spawnIngest({
      name: 'ingest-nats-login',
      redisUrl: redis.url,
      topology: { chains: { anvil: testChain([proxy]) }, streams: [{ stream, chain: 'anvil', kind: 'newHeads' }] },
      env: { ...FAST_WORKER_ENV, INGEST_JETSTREAM_TARGET: target, INGEST_NATS_USERNAME: USER, INGEST_NATS_PASSWORD: PASSWORD },
    });
    workers.push(worker);
    await using _demand = holdDemand(redis.client(), [stream]);
    const mining = mineEvery(chain, 100);
    const events = () => readJetStreamEvents(jsm, JETSTREAM, stream);
    try {
      await waitFor(async () => (await events()).length >= 5, {
        timeoutMs: 10_000,
        intervalMs: 100,
        message: 'the ingest worker with the NATS login never wrote five blocks to the JetStream target',
      });
    } finally {
      await mining.stop();
    }
    const head = mining.head();
    await waitFor(
      async () => {
        const last = (await events()).at(-1)?.event;
        return last?.type === 'block' && last.number === head;
      },
      {
        timeoutMs: 5_000,
        intervalMs: 100,
        message: `the ingest worker never wrote block ${head}`,
      },
    );
    expect(await auditBlocks(await events(), chain, head)).toMatchObject({ duplicates: 0, gaps: 0, wrong: [] });
    expect(worker.service.lines.filter((line) => line.includes(PASSWORD))).toEqual([]);
  }, 20_000);
});
