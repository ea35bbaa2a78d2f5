import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { defineStream } from '@streamgate/protocol';
import { createPublisher } from '@streamgate/server';
import type { TokenIssuer } from '@streamgate/server';
import { ensureJetStream } from '@streamgate/server/jetstream';
import { startNatsCluster, startRedis, waitFor } from '@streamgate/testkit';
import type { NatsCluster, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openFrameLog } from './support/frameLog.js';
import { probeSubscribe } from './support/probeSubscribe.js';
import { spawnFileKeyRelay } from './support/spawnFileKeyRelay.js';
import { fileKeyTokens } from './support/fileKeyTokens.js';
import type { FileKeyTokens } from './support/fileKeyTokens.js';

/*
 * A relay whose NATS login is refused (a wrong password at its start, or the server's password
 * rotated under it) keeps its JetStream target down, and brings it back up by itself once the
 * password it holds is accepted again, without a restart: the server's password is changed under
 * the running relay (nats-server reloads its config on SIGHUP, NatsCluster.reload).
 */

const USER = 'streamgate';
const SERVER_FIRST = 'nats-first-pw-6a31';
const RELAY_PW = 'nats-relay-pw-2f90';
const ROTATED = 'nats-rotated-pw-b44c';
const JETSTREAM = 'LOGINRECOVERY';
const ISSUER = 'jetstream-login-recovery';
const AUDIENCE = 'jetstream-login-recovery-relay';
const task = defineStream<{ n: number }>('task');

let redis: RedisServer | undefined;
let nats: NatsCluster | undefined;
let tokens: TokenIssuer;
let keyFile: FileKeyTokens | undefined;
let target = '';
const relays: RelayProcess[] = [];

beforeAll(async () => {
  [redis, nats] = await Promise.all([startRedis(), startNatsCluster({ auth: { username: USER, password: SERVER_FIRST } })]);
  target = nats.jetStreamTarget(JETSTREAM);
  const nc = await nats.connect();
  const created = await ensureJetStream(await jetstreamManager(nc), { stream: JETSTREAM }, { replicas: 3 });
  await nc.close();
  if (!created.ok) throw new Error(created.error.message);
  keyFile = await fileKeyTokens({ kid: 'login-recovery-key', issuer: ISSUER, audience: AUDIENCE, redis: redis.url });
  tokens = keyFile.tokens;
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((relay) => relay.service.stop()));
  await Promise.all([nats?.stop(), redis?.stop()]);
  await keyFile?.remove();
});

function cluster(): NatsCluster {
  if (nats === undefined) throw new Error('beforeAll did not start the NATS cluster');
  return nats;
}

async function startRelay(name: string): Promise<RelayProcess> {
  const relay = await spawnFileKeyRelay({
    name,
    issuer: ISSUER,
    audience: AUDIENCE,
    redisAllowlist: redis?.url ?? '',
    jwksFile: keyFile?.jwksFile ?? '',
    env: { RELAY_JETSTREAM_ALLOWLIST: target, RELAY_NATS_USERNAME: USER, RELAY_NATS_PASSWORD: RELAY_PW },
  });
  relays.push(relay);
  return relay;
}

async function tokenFor(stream: string): Promise<string> {
  return (await tokens.issue(task.for(stream), { subject: 'alice', redis: target })).token;
}

/** Waits for /readyz to list the JetStream target `state`. */
async function targetIs(relay: RelayProcess, state: 'up' | 'down', timeoutMs: number): Promise<void> {
  await waitFor(async () => (await (await fetch(`${relay.httpUrl}/readyz`)).text()).includes(`${target} ${state}`), {
    timeoutMs,
    intervalMs: 100,
    message: `the relay never reported its JetStream target ${state} on /readyz`,
  });
}

async function connectionErrors(relay: RelayProcess): Promise<number> {
  const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith('streamgate_relay_jetstream_errors_total{') && l.includes('operation="connection"') && l.includes(target));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** Subscribes through the relay, publishes one entry with the server's current login, and waits for it. */
async function delivers(relay: RelayProcess, stream: string, n: number): Promise<void> {
  const log = await openFrameLog(relay.url);
  const auth = cluster().auth;
  const publisher = createPublisher({ targets: target, natsUsername: USER, natsPassword: auth?.password ?? '' });
  try {
    log.send({ op: 'subscribe', sid: 's', token: await tokenFor(stream) });
    await log.until((fs) => fs.some((f) => f.op === 'live' && f.sid === 's'), `the relay never went live on ${stream}`, 5_000);
    const published = await publisher.publish(task.for(stream), { n });
    if (!published.ok) throw new Error(`${published.error.code}: ${published.error.message}`);
    await log.until((fs) => fs.some((f) => f.op === 'event' && f.id === published.id), `the relay never delivered ${published.id}`, 5_000);
  } finally {
    log.close();
    await publisher.close();
  }
}

describe('a relay whose NATS login is refused', () => {
  it('started with a password the server refuses, comes up and delivers once the server accepts it, without a restart', async () => {
    await cluster().reload({ username: USER, password: SERVER_FIRST });
    const relay = await startRelay('relay-login-refused');
    await targetIs(relay, 'down', 5_000);
    expect(await probeSubscribe(relay.url, await tokenFor('refused'))).toMatchObject({
      op: 'error',
      code: 'stream_unavailable',
      retryable: true,
    });
    // Every attempt is counted, so the count grows while the login is refused.
    const first = await connectionErrors(relay);
    expect(first).toBeGreaterThan(0);
    await waitFor(async () => (await connectionErrors(relay)) > first, {
      timeoutMs: 8_000,
      intervalMs: 200,
      message: 'the relay never tried its NATS login again',
    });
    expect(relay.service.lines.some((line) => /authorization violation/i.test(line))).toBe(true);

    await cluster().reload({ username: USER, password: RELAY_PW });
    await targetIs(relay, 'up', 8_000);
    await delivers(relay, 'after-fix', 1);
    expect(relay.service.lines.filter((line) => line.includes(RELAY_PW) || line.includes(SERVER_FIRST))).toEqual([]);
  }, 20_000);

  it('whose password the server rotates away and back, goes down and comes back up delivering', async () => {
    await cluster().reload({ username: USER, password: RELAY_PW });
    const relay = await startRelay('relay-login-rotated');
    await targetIs(relay, 'up', 5_000);
    await delivers(relay, 'before-rotation', 1);

    await cluster().reload({ username: USER, password: ROTATED });
    await targetIs(relay, 'down', 8_000);
    expect(await probeSubscribe(relay.url, await tokenFor('rotated'))).toMatchObject({ op: 'error', code: 'stream_unavailable' });

    await cluster().reload({ username: USER, password: RELAY_PW });
    await targetIs(relay, 'up', 8_000);
    await delivers(relay, 'after-rotation', 2);
    expect(relay.service.lines.filter((line) => line.includes(RELAY_PW) || line.includes(ROTATED))).toEqual([]);
  }, 20_000);
});
