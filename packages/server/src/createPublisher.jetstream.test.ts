import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEntryFields, defineStream, jetStreamSubject, normalizeStreamTarget } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import { freePort, startNatsCluster, startRedis, waitFor } from '@streamgate/testkit';
import type { NatsCluster, RedisServer } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';
import type { PublisherOptions } from './createPublisher.js';
import { createTokenIssuer } from './createTokenIssuer.js';
import { generateSigningKey } from './generateSigningKey.js';
import { ensureJetStream } from './jetstream/ensureJetStream.js';
import { SigningKeySet } from './SigningKeySet.js';

const STREAM = 'PUB';
const jobs = defineStream('jobs', z.object({ step: z.number() }));
const notes = defineStream<unknown>('notes');

/** Open TCP sockets of this process: the publisher's Redis and NATS connections among them. */
const tcpSockets = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;

describe('createPublisher on JetStream targets (real 3-node JetStream cluster, R3 stream)', () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let redisServer: RedisServer;
  let redis: Redis;
  /** The cluster by all its seeds, as a user writes it: `nats://127.0.0.1:p1,127.0.0.1:p2,…/PUB`. */
  let natsTarget: string;

  beforeAll(async () => {
    [cluster, redisServer] = await Promise.all([startNatsCluster(), startRedis()]);
    nc = await cluster.connect();
    jsm = await jetstreamManager(nc);
    // startNatsCluster resolves once a meta leader is elected; the other peers may register a
    // moment later, and an R3 stream is refused ("no suitable peers for placement") until they do.
    await waitFor(async () => (await ensureJetStream(jsm, { stream: STREAM }, { replicas: 3 })).ok || null, {
      timeoutMs: 20_000,
      message: 'the R3 stream PUB is created on the 3-node cluster',
    });
    natsTarget = `nats://${cluster.servers.replaceAll('nats://', '')}/${STREAM}`;
    redis = redisServer.client();
  }, 60_000);
  afterAll(async () => {
    await Promise.all([cluster?.stop(), redisServer?.stop()]);
  });

  const stored = async (id: string) => jsm.streams.getMessage(STREAM, { seq: Number(/^0-([0-9]+)$/.exec(id)?.[1]) });
  const countOn = async (subject: string) => (await jsm.streams.info(STREAM, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;

  it('stores the entry on the task subject, its data verbatim as §17 says, and answers 0-<sequence>', async () => {
    const publisher = createPublisher({ targets: natsTarget });
    try {
      const payload = { text: 'héllo ✓', nested: { list: [1, 2.5, null] } };
      const result = await publisher.publish(notes.for('run', 'a.b'), payload);
      if (!result.ok) throw new Error(result.error.message);
      expect(result).toEqual({ ok: true, id: expect.stringMatching(/^0-[1-9][0-9]*$/) as string, duplicate: false });
      const message = await stored(result.id);
      expect(message?.subject).toBe(`${STREAM}.notes:run:a%2Eb`);
      expect(message?.string()).toBe(JSON.stringify(payload));
      expect(message?.header?.get('Nats-Msg-Id') ?? '').toBe('');

      // A burst before and after the connection is up: one import, one connection, every entry stored once.
      const burst = await Promise.all(Array.from({ length: 30 }, (_, step) => publisher.publish(jobs.for('burst'), { step })));
      expect(burst.filter((r) => !r.ok)).toEqual([]);
      expect(await countOn(jetStreamSubject(STREAM, 'jobs:burst'))).toBe(30);
    } finally {
      await publisher.close();
    }
  });

  it('answers a retry with the same idempotency key as a duplicate with the first id, sent as Nats-Msg-Id', async () => {
    const publisher = createPublisher({ targets: natsTarget });
    try {
      const stream = jobs.for('retry');
      const first = await publisher.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
      const again = await publisher.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
      const other = await publisher.publish(stream, { step: 2 }, { idempotencyKey: 'step-2' });
      if (!first.ok || !other.ok) throw new Error('publish failed');
      expect(first.duplicate).toBe(false);
      expect(again).toEqual({ ok: true, id: first.id, duplicate: true });
      expect(other.duplicate).toBe(false);
      expect((await stored(first.id))?.header?.get('Nats-Msg-Id')).toBe('jobs:retry step-1');
      expect(await countOn(jetStreamSubject(STREAM, stream.name))).toBe(2);
      // Keys are checked as on Redis, before anything is sent.
      const bad = await publisher.publish(stream, { step: 3 }, { idempotencyKey: 'has space' });
      expect(!bad.ok && bad.error).toMatchObject({ code: 'idempotency_key_invalid', retryable: false, field: 'idempotencyKey' });
      const invalid = await publisher.publish(stream, { step: 'x' } as unknown as { step: number });
      expect(!invalid.ok && invalid.error).toMatchObject({ code: 'payload_invalid', field: 'payload.step' });
      expect(await countOn(jetStreamSubject(STREAM, stream.name))).toBe(2);
    } finally {
      await publisher.close();
    }
  });

  it("takes waitForReplicas as met by JetStream's quorum ack, and still refuses a malformed one", async () => {
    const publisher = createPublisher({ targets: natsTarget, timeoutMs: 3_000, waitForReplicas: { count: 1, timeoutMs: 500 } });
    try {
      const asked = await publisher.publish(jobs.for('wait'), { step: 1 }, { waitForReplicas: { count: 2, timeoutMs: 1_000 } });
      const byDefault = await publisher.publish(jobs.for('wait'), { step: 2 });
      expect([asked.ok, byDefault.ok]).toEqual([true, true]);
      const malformed = await publisher.publish(jobs.for('wait'), { step: 3 }, { waitForReplicas: { count: 1, timeoutMs: 3_000 } });
      expect(!malformed.ok && malformed.error).toMatchObject({ code: 'options_invalid', retryable: false, field: 'waitForReplicas' });
      expect(await countOn(jetStreamSubject(STREAM, 'jobs:wait'))).toBe(2);
    } finally {
      await publisher.close();
    }
  });

  it('writes each stream of a Redis + JetStream list where placeStream and a token issued with the list say', async () => {
    // Written as a user might: the Redis URL without its db; normalization must not move a stream.
    const list = [redisServer.url.replace(/\/0$/, ''), natsTarget];
    const normalized = list.map((raw) => normalizeStreamTarget(raw) ?? raw);
    const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k1')]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const issuer = createTokenIssuer({ keys: loaded.keys, issuer: 'https://auth.test', audience: 'relay', redis: list });
    const publisher = createPublisher({ targets: list, idempotencyWindowSeconds: 60 });
    try {
      const refs = Array.from({ length: 40 }, (_, i) => jobs.for('mixed', String(i)));
      const homes = new Set<string>();
      for (const [step, ref] of refs.entries()) {
        const result = await publisher.publish(ref, { step }, { idempotencyKey: `k-${step}` });
        if (!result.ok) throw new Error(`${ref.name}: ${result.error.message}`);
        const home = placeStream(ref.name, normalized);
        homes.add(home);
        const claims = decodeJwt((await issuer.issue(ref, { subject: 'u' })).token);
        expect(claims.redis).toBe(home);
        const inRedis = await redis.xrange(ref.name, '-', '+');
        const inJetStream = await countOn(jetStreamSubject(STREAM, ref.name));
        if (home === normalized[1]) {
          expect([inRedis.length, inJetStream, result.id.startsWith('0-')]).toEqual([0, 1, true]);
          expect((await stored(result.id))?.json()).toEqual({ step });
        } else {
          expect([inRedis.length, inJetStream]).toEqual([1, 0]);
          expect(inRedis[0]?.[0]).toBe(result.id);
          expect(decodeEntryFields(inRedis[0]?.[1] ?? [])).toEqual({ ok: true, json: JSON.stringify({ step }) });
        }
      }
      expect(homes).toEqual(new Set(normalized));
    } finally {
      await publisher.close();
    }
  });

  it('refuses bad targets and options at construction with a TypeError naming the field', () => {
    const make = (options: Record<string, unknown>) => () => createPublisher(options as PublisherOptions);
    expect(make({ targets: 'nats://u:pw@n1:4222/PUB' })).toThrow(TypeError);
    expect(make({ targets: 'nats://u:secret@n1:4222/PUB' })).toThrow(
      /^targets: "nats:\/\/<credentials>@n1:4222\/PUB" is not .*without credentials/,
    );
    expect(make({ targets: ['redis://r:6379/0', 'nats://n1/bad.stream'] })).toThrow(/^targets\[1\]: "nats:\/\/n1\/bad.stream" is not/);
    expect(make({ targets: ['nats://N1:4222/PUB', 'nats://n1/PUB'] })).toThrow(/twice \(as nats:\/\/n1:4222\/PUB\)/);
    expect(make({ targets: natsTarget, natsUsername: 'u' })).toThrow(/^natsPassword is missing/);
    expect(make({ targets: natsTarget, natsPassword: 'p' })).toThrow(/^natsUsername is missing/);
    expect(make({ targets: 'redis://r:6379/0', natsUsername: 'u', natsPassword: 'p' })).toThrow(/no target is one/);
    expect(make({ targets: natsTarget, maxLen: 100 })).toThrow(/^maxLen applies to Redis targets only.*max_msgs_per_subject/);
    expect(make({ targets: natsTarget, idempotencyWindowSeconds: 60 })).toThrow(/^idempotencyWindowSeconds .*duplicate_window/);
    expect(make({ targets: natsTarget, password: 'p' })).toThrow(/^password .*natsPassword/);
    // Each holds where it means something: on the Redis targets of a mixed list, NATS credentials with a NATS target.
    expect(make({ targets: [natsTarget, 'redis://r:6379/0'], maxLen: 100, password: 'p' })).not.toThrow();
    expect(make({ targets: natsTarget, natsUsername: 'u', natsPassword: 'p' })).not.toThrow();
  });

  it('answers a JetStream stream that does not exist with a typed redis_rejected, and keeps working', async () => {
    const publisher = createPublisher({ targets: [natsTarget.replace(/\/PUB$/, '/NOSUCH')], timeoutMs: 3_000 });
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const result = await publisher.publish(jobs.for('x'), { step: attempt });
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.error).toMatchObject({ code: 'redis_rejected', retryable: false, written: 'no' });
        expect(result.error.message).toContain('NOSUCH.jobs:x');
        expect(result.error.message).toContain('ensureJetStream');
      }
    } finally {
      await publisher.close();
    }
  });

  it('answers redis_unavailable, nothing sent, when no NATS server answers at the target', async () => {
    const publisher = createPublisher({ targets: `nats://127.0.0.1:${await freePort()}/${STREAM}`, timeoutMs: 1_000 });
    try {
      const result = await publisher.publish(jobs.for('x'), { step: 1 });
      expect(!result.ok && result.error).toMatchObject({ code: 'redis_unavailable', retryable: true, written: 'no' });
    } finally {
      await publisher.close();
    }
  });

  it('closes its NATS connection with its Redis ones; later publishes answer closed', async () => {
    const list = [redisServer.url, natsTarget];
    const normalized = list.map((raw) => normalizeStreamTarget(raw) ?? raw);
    const placedOn = (target: string | undefined) => {
      const id = Array.from({ length: 50 }, (_, i) => String(i)).find((i) => placeStream(jobs.for('close', i).name, normalized) === target);
      if (id === undefined) throw new Error(`no stream of 50 placed on ${target}`);
      return jobs.for('close', id);
    };
    const [onRedis, onNats] = [placedOn(normalized[0]), placedOn(normalized[1])];
    const before = tcpSockets();
    const publisher = createPublisher({ targets: list });
    const opened = await Promise.all([publisher.publish(onRedis, { step: 1 }), publisher.publish(onNats, { step: 1 })]);
    expect(opened.map((r) => r.ok)).toEqual([true, true]);
    expect(tcpSockets()).toBeGreaterThanOrEqual(before + 2);
    await publisher.close();
    await waitFor(() => tcpSockets() <= before, { timeoutMs: 3_000, message: "the publisher's sockets to be closed" });
    const after = await Promise.all([publisher.publish(onRedis, { step: 2 }), publisher.publish(onNats, { step: 2 })]);
    for (const result of after) expect(!result.ok && result.error).toMatchObject({ code: 'closed', retryable: false, written: 'no' });
    expect(await countOn(jetStreamSubject(STREAM, onNats.name))).toBe(1);
  });
});
