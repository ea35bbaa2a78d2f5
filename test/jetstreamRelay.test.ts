import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { defineStream, jetStreamId, jetStreamRepublish, jetStreamSubject } from '@streamgate/protocol';
import type { TokenIssuer } from '@streamgate/server';
import { startNatsCluster, startRedis } from '@streamgate/testkit';
import type { NatsCluster, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openFrameLog } from './support/frameLog.js';
import { spawnFileKeyRelay } from './support/spawnFileKeyRelay.js';
import type { FrameLog, WireFrame } from './support/frameLog.js';
import { fileKeyTokens } from './support/fileKeyTokens.js';
import type { FileKeyTokens } from './support/fileKeyTokens.js';

const ISSUER = 'jetstream-auth';
const AUDIENCE = 'jetstream-relay';
const task = defineStream<{ n: number }>('task');

let redis: RedisServer | undefined;
let nats: NatsCluster | undefined;
let js: JetStreamClient;
const relays: RelayProcess[] = [];
let tokens: TokenIssuer;
let keyFile: FileKeyTokens | undefined;
let tasksTarget = '';
let trimTarget = '';

async function startRelay(name: string): Promise<RelayProcess> {
  const relay = await spawnFileKeyRelay({
    name,
    issuer: ISSUER,
    audience: AUDIENCE,
    redisAllowlist: redis?.url ?? '',
    jwksFile: keyFile?.jwksFile ?? '',
    env: {
      RELAY_JETSTREAM_ALLOWLIST: `${tasksTarget} ${trimTarget}`,
      RELAY_REDIS_DOWN_AFTER_MS: '1000',
    },
  });
  relays.push(relay);
  return relay;
}

beforeAll(async () => {
  [redis, nats] = await Promise.all([startRedis(), startNatsCluster()]);
  tasksTarget = nats.jetStreamTarget('TASKS');
  trimTarget = nats.jetStreamTarget('TRIM');
  const nc = await nats.connect();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'TASKS', subjects: ['TASKS.*'], num_replicas: 3, republish: jetStreamRepublish('TASKS') });
  await jsm.streams.add({
    name: 'TRIM',
    subjects: ['TRIM.*'],
    num_replicas: 3,
    max_msgs_per_subject: 5,
    republish: jetStreamRepublish('TRIM'),
  });
  js = jetstream(nc);
  keyFile = await fileKeyTokens({ kid: 'jetstream-key', issuer: ISSUER, audience: AUDIENCE, redis: redis.url });
  tokens = keyFile.tokens;
}, 90_000);

afterAll(async () => {
  for (const relay of relays) await relay.service.stop();
  await nats?.stop();
  await redis?.stop();
  await keyFile?.remove();
});

/** The event frames of task `stream` (event frames name the stream, not the subscription). */
const events = (frames: readonly WireFrame[], stream: string): WireFrame[] =>
  frames.filter((f) => f.op === 'event' && f.stream === task.for(stream).name);

async function tokenFor(stream: string, target?: string): Promise<string> {
  const issued = await tokens.issue(task.for(stream), { subject: 'alice', ...(target === undefined ? {} : { redis: target }) });
  return issued.token;
}

/** Writes entry `n` of task `stream` (the stream `task:<stream>`) to a JetStream stream, as any producer could. */
async function publish(jetStream: string, stream: string, n: number): Promise<string> {
  const ack = await js.publish(jetStreamSubject(jetStream, task.for(stream).name), JSON.stringify({ n }));
  return jetStreamId(ack.seq);
}

async function subscribed(log: FrameLog, sid: string): Promise<WireFrame> {
  await log.until((fs) => fs.some((f) => f.op === 'live' && f.sid === sid), `${sid} never went live`);
  const frame = log.frames.find((f) => f.op === 'subscribed' && f.sid === sid);
  if (frame === undefined) throw new Error(`${sid}: live without subscribed`);
  return frame;
}

describe('a relay reading a Redis target and a JetStream target at once', () => {
  it('delivers both on one socket, each entry once and in order; JetStream ids are 0-<sequence>', async () => {
    const relay = await startRelay('relay-js-a');
    const log = await openFrameLog(relay.url);
    try {
      log.send({ op: 'subscribe', sid: 'r', token: await tokenFor('both.redis') });
      // A name with dots: one subject token each (%2E), not a deeper subject.
      log.send({ op: 'subscribe', sid: 'j', token: await tokenFor('both.js', tasksTarget) });
      await subscribed(log, 'r');
      await subscribed(log, 'j');
      const client = redis?.client();
      const redisIds: string[] = [];
      const jsIds: string[] = [];
      for (let n = 0; n < 20; n++) {
        redisIds.push(String(await client?.xadd(task.for('both.redis').name, '*', 'data', JSON.stringify({ n }))));
        jsIds.push(await publish('TASKS', 'both.js', n));
      }
      await log.until((fs) => events(fs, 'both.redis').length >= 20 && events(fs, 'both.js').length >= 20, 'not every entry arrived');
      expect(events(log.frames, 'both.redis').map((f) => f.id)).toEqual(redisIds);
      expect(events(log.frames, 'both.js').map((f) => f.id)).toEqual(jsIds);
      expect(events(log.frames, 'both.js').map((f) => f.data)).toEqual(jsIds.map((_, n) => ({ n })));
      expect(jsIds.every((id) => /^0-[1-9][0-9]*$/.test(id))).toBe(true);
      const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
      expect(metrics).toMatch(/streamgate_relay_jetstream_reads_total\{target="nats:\/\/[^"]+\/TASKS"/);
    } finally {
      log.close();
    }
  }, 60_000);

  it('resumes on another relay from a JetStream position with no gap and no duplicate', async () => {
    const [a, b] = [relays[0] ?? (await startRelay('relay-js-a')), await startRelay('relay-js-b')];
    const first = await openFrameLog(a.url);
    const ids: string[] = [];
    try {
      first.send({ op: 'subscribe', sid: 'x', token: await tokenFor('resume', tasksTarget) });
      await subscribed(first, 'x');
      for (let n = 0; n < 5; n++) ids.push(await publish('TASKS', 'resume', n));
      // Another task's entries between: its sequences are the JetStream stream's, shared by all subjects.
      await publish('TASKS', 'other', 0);
      await first.until((fs) => events(fs, 'resume').length >= 5, 'first relay never delivered five');
    } finally {
      first.close();
    }
    const position = events(first.frames, 'resume').at(-1)?.id ?? '';
    for (let n = 5; n < 10; n++) ids.push(await publish('TASKS', 'resume', n));
    const second = await openFrameLog(b.url);
    try {
      second.send({ op: 'subscribe', sid: 'y', token: await tokenFor('resume', tasksTarget), from: position });
      expect(await subscribed(second, 'y')).toMatchObject({ recovery: 'recovered' });
      for (let n = 10; n < 12; n++) ids.push(await publish('TASKS', 'resume', n));
      await second.until((fs) => events(fs, 'resume').length >= 7, 'second relay never caught up and went on');
      expect(events(second.frames, 'resume').map((f) => f.id)).toEqual(ids.slice(5));
    } finally {
      second.close();
    }
  }, 60_000);

  it('says truncated when the JetStream stream’s limits trimmed entries after the position', async () => {
    const relay = relays[0] ?? (await startRelay('relay-js-a'));
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push(await publish('TRIM', 'trimmed', n));
    const position = ids[0] ?? '';
    // max_msgs_per_subject 5: of ten, the first five are gone, the position's successors among them.
    for (let n = 3; n < 10; n++) ids.push(await publish('TRIM', 'trimmed', n));
    const log = await openFrameLog(relay.url);
    try {
      log.send({ op: 'subscribe', sid: 't', token: await tokenFor('trimmed', trimTarget), from: position });
      expect(await subscribed(log, 't')).toMatchObject({ recovery: 'truncated' });
      await log.until((fs) => events(fs, 'trimmed').length >= 5, 'the retained five never arrived');
      expect(events(log.frames, 'trimmed').map((f) => f.id)).toEqual(ids.slice(5));
    } finally {
      log.close();
    }
  }, 60_000);

  it('answers reset to a resume from a Redis id, and delivers the stream from its start', async () => {
    const relay = relays[0] ?? (await startRelay('relay-js-a'));
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push(await publish('TASKS', 'from-redis', n));
    const log = await openFrameLog(relay.url);
    try {
      // A client that moved from a Redis target holds a time-based id: no JetStream position.
      log.send({ op: 'subscribe', sid: 'm', token: await tokenFor('from-redis', tasksTarget), from: '1700000000000-0' });
      expect(await subscribed(log, 'm')).toMatchObject({ recovery: 'reset' });
      await log.until((fs) => events(fs, 'from-redis').length >= 3, 'the stream was not delivered from its start');
      expect(events(log.frames, 'from-redis').map((f) => f.id)).toEqual(ids);
    } finally {
      log.close();
    }
  }, 60_000);

  // Last: it takes the whole NATS cluster down.
  it('holds a JetStream target down like a Redis one: /readyz says so, its subscriptions end stream_unavailable, Redis flows on', async () => {
    const relay = relays[0] ?? (await startRelay('relay-js-a'));
    const log = await openFrameLog(relay.url);
    try {
      log.send({ op: 'subscribe', sid: 'd', token: await tokenFor('down', tasksTarget) });
      log.send({ op: 'subscribe', sid: 'up', token: await tokenFor('still.up') });
      await subscribed(log, 'd');
      await subscribed(log, 'up');
      const cluster = nats;
      if (cluster === undefined) throw new Error('no NATS cluster');
      await Promise.all([0, 1, 2].map((i) => cluster.kill(i)));
      await log.until(
        (fs) => fs.some((f) => f.op === 'unsubscribed' && f.sid === 'd' && f.reason === 'stream_unavailable'),
        'the JetStream subscription never ended stream_unavailable',
        30_000,
      );
      const ready = await fetch(`${relay.httpUrl}/readyz`);
      expect(ready.status).toBe(200);
      const body = await ready.text();
      expect(body).toContain(`${tasksTarget} down`);
      expect(body).toMatch(/redis:\/\/127\.0\.0\.1:\d+\/0 up/);
      const id = String(await redis?.client().xadd(task.for('still.up').name, '*', 'data', '{"n":0}'));
      await log.until((fs) => events(fs, 'still.up').some((f) => f.id === id), 'the Redis stream stopped with the NATS cluster');
    } finally {
      log.close();
    }
  }, 60_000);
});
