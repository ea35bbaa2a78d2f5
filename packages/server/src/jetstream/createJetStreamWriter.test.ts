import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStream, jetStreamSubject, MAX_ENTRY_DATA_BYTES } from '@streamgate/protocol';
import { freePort, startNatsCluster } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { createJetStreamWriter } from './createJetStreamWriter.js';
import type { JetStreamWriter } from './createJetStreamWriter.js';
import { ensureJetStream } from './ensureJetStream.js';

const STREAM = 'WRITES';
const jobs = defineStream('jobs', z.object({ step: z.number() }));
const notes = defineStream<unknown>('notes');

describe('createJetStreamWriter (real 3-node JetStream cluster)', () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let writer: JetStreamWriter;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    nc = await cluster.connect();
    jsm = await jetstreamManager(nc);
    const ensured = await ensureJetStream(jsm, { stream: STREAM });
    if (!ensured.ok) throw new Error(ensured.error.message);
    writer = createJetStreamWriter({ connection: nc, stream: STREAM });
  }, 60_000);
  afterAll(async () => {
    await writer?.close();
    await cluster?.stop();
  });

  const lastSeq = async () => (await jsm.streams.info(STREAM)).state.last_seq;

  it('stores entries on the task subject with increasing 0-<seq> ids that read back', async () => {
    const stream = jobs.for('ids');
    const ids: string[] = [];
    for (let step = 1; step <= 5; step += 1) {
      const result = await writer.publish(stream, { step });
      if (!result.ok) throw new Error(result.error.message);
      expect(result.duplicate).toBe(false);
      ids.push(result.id);
    }
    const seqs = ids.map((id) => Number(/^0-([0-9]+)$/.exec(id)?.[1]));
    expect(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] ?? Infinity))).toBe(true);
    for (const [i, seq] of seqs.entries()) {
      const message = await jsm.streams.getMessage(STREAM, { seq });
      expect(message?.subject).toBe(jetStreamSubject(STREAM, stream.name));
      expect(message?.json()).toEqual({ step: i + 1 });
    }
  });

  it('stores the payload verbatim, as createPublisher encodes an entry data field', async () => {
    const payload = { text: 'héllo ✓ 🚀', nested: { list: [1, 2.5, null, true], empty: {} }, quote: '"\\' };
    const stream = notes.for('verbatim.dots');
    const result = await writer.publish(stream, payload);
    if (!result.ok) throw new Error(result.error.message);
    const message = await jsm.streams.getMessage(STREAM, { seq: Number(result.id.slice(2)) });
    expect(message?.string()).toBe(JSON.stringify(payload));
    // A name's dots stay inside one subject token.
    expect(message?.subject).toBe(`${STREAM}.notes:verbatim%2Edots`);
  });

  it('refuses a payload over the entry limit with payload_too_large and sends nothing', async () => {
    const before = await lastSeq();
    const result = await writer.publish(notes.for('big'), { blob: 'x'.repeat(MAX_ENTRY_DATA_BYTES) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'payload_too_large', retryable: false, field: 'payload', limitBytes: MAX_ENTRY_DATA_BYTES });
    expect(result.error.code === 'payload_too_large' && result.error.bytes).toBe(
      JSON.stringify({ blob: 'x'.repeat(MAX_ENTRY_DATA_BYTES) }).length,
    );
    expect(await lastSeq()).toBe(before);
  });

  it('refuses a bad payload, stream, key or fence before sending', async () => {
    const before = await lastSeq();
    const bad = await writer.publish(jobs.for('bad'), { step: 'one' } as unknown as { step: number });
    expect(!bad.ok && bad.error).toMatchObject({ code: 'payload_invalid', field: 'payload.step' });
    const key = await writer.publish(jobs.for('bad'), { step: 1 }, { idempotencyKey: 'has space' });
    expect(!key.ok && key.error).toMatchObject({ code: 'idempotency_key_invalid', retryable: false });
    const fence = await writer.publish(jobs.for('bad'), { step: 1 }, { expectLastId: '1700000000000-0' });
    expect(!fence.ok && fence.error).toMatchObject({ code: 'options_invalid', field: 'expectLastId' });
    const name = await writer.publish({ name: 'no spaces allowed', schema: undefined }, {});
    expect(!name.ok && name.error).toMatchObject({ code: 'stream_invalid', field: 'stream' });
    expect(await lastSeq()).toBe(before);
  });

  it('stores a retried write with the same idempotency key once and answers it with the same id', async () => {
    const stream = jobs.for('retry');
    const first = await writer.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
    const again = await writer.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
    const other = await writer.publish(stream, { step: 2 }, { idempotencyKey: 'step-2' });
    // The key is scoped to the task stream, as createPublisher's is.
    const elsewhere = await writer.publish(jobs.for('retry:other'), { step: 1 }, { idempotencyKey: 'step-1' });
    if (!first.ok || !again.ok || !other.ok || !elsewhere.ok) throw new Error('publish failed');
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ ok: true, id: first.id, duplicate: true });
    expect([other.duplicate, elsewhere.duplicate]).toEqual([false, false]);
    const subject = jetStreamSubject(STREAM, stream.name);
    const last = await jsm.streams.getMessage(STREAM, { last_by_subj: subject });
    expect(`0-${last?.seq}`).toBe(other.id);
    const info = await jsm.streams.info(STREAM, { subjects_filter: subject });
    expect(info.state.subjects?.[subject]).toBe(2);
  });

  it('fences on the last subject sequence: a stale writer gets fenced and stores nothing', async () => {
    const stream = jobs.for('fenced');
    const first = await writer.publish(stream, { step: 1 }, { expectLastId: '0-0' });
    if (!first.ok) throw new Error(first.error.message);
    const second = await writer.publish(stream, { step: 2 }, { expectLastId: first.id, idempotencyKey: 'f-2' });
    if (!second.ok) throw new Error(second.error.message);
    // The same attempt again (a retry after a lost ack) is a duplicate, not a fence violation.
    const retried = await writer.publish(stream, { step: 2 }, { expectLastId: first.id, idempotencyKey: 'f-2' });
    expect(retried).toEqual({ ok: true, id: second.id, duplicate: true });

    const before = await lastSeq();
    const stale = await writer.publish(stream, { step: 99 }, { expectLastId: first.id, idempotencyKey: 'f-99' });
    expect(stale.ok).toBe(false);
    if (stale.ok) return;
    expect(stale.error).toEqual({
      code: 'fenced',
      retryable: false,
      written: 'no',
      expectedId: first.id,
      lastId: second.id,
      message: expect.stringContaining('nothing was written') as string,
    });
    const fresh = await writer.publish(stream, { step: 0 }, { expectLastId: '0-0' });
    expect(!fresh.ok && fresh.error.code).toBe('fenced');
    // A writer that believes the task has entries when it has none.
    const ahead = await writer.publish(jobs.for('fenced:empty'), { step: 1 }, { expectLastId: second.id, idempotencyKey: 'e-1' });
    expect(!ahead.ok && ahead.error).toMatchObject({ code: 'fenced', expectedId: second.id, lastId: '0-0' });
    expect(await lastSeq()).toBe(before);
  });

  it('answers jetstream_stream_missing, naming the subject, when no stream holds it', async () => {
    const orphan = createJetStreamWriter({ connection: nc, stream: 'NOSUCH', timeoutMs: 3_000 });
    const result = await orphan.publish(jobs.for('x'), { step: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'jetstream_stream_missing', retryable: false, written: 'no', subject: 'NOSUCH.jobs:x' });
    expect(result.error.message).toContain('NOSUCH.jobs:x');
    expect(result.error.message).toContain('ensureJetStream');
    await orphan.close();
  });

  it('refuses, as jetstream_rejected, a subject that another JetStream stream captures', async () => {
    await jsm.streams.add({ name: 'CAPTOR', subjects: ['ELSEWHERE.*'], num_replicas: 3 });
    const misplaced = createJetStreamWriter({ connection: nc, stream: 'ELSEWHERE' });
    const result = await misplaced.publish(jobs.for('x'), { step: 1 });
    expect(!result.ok && result.error).toMatchObject({ code: 'jetstream_rejected', retryable: false, written: 'no', errCode: 10060 });
    expect((await jsm.streams.info('CAPTOR')).state.messages).toBe(0);
  });

  it('answers jetstream_unavailable, nothing sent, when its target does not answer', async () => {
    const port = await freePort();
    const unreachable = createJetStreamWriter({ target: `nats://127.0.0.1:${port}/${STREAM}`, timeoutMs: 2_000 });
    const result = await unreachable.publish(jobs.for('x'), { step: 1 });
    expect(!result.ok && result.error).toMatchObject({ code: 'jetstream_unavailable', retryable: true, written: 'no' });
    await unreachable.close();
  });

  it('opens its own connection from a target and answers closed after close()', async () => {
    const own = createJetStreamWriter({ target: `nats://${cluster.servers.replaceAll('nats://', '')}/${STREAM}` });
    const result = await own.publish(jobs.for('own'), { step: 1 });
    if (!result.ok) throw new Error(result.error.message);
    const message = await jsm.streams.getMessage(STREAM, { seq: Number(result.id.slice(2)) });
    expect(message?.json()).toEqual({ step: 1 });
    await own.close();
    const after = await own.publish(jobs.for('own'), { step: 2 });
    expect(!after.ok && after.error).toMatchObject({ code: 'closed', retryable: false, written: 'no' });
  });
});
