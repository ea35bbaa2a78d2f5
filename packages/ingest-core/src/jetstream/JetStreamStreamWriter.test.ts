import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager, PubHeaders, StorageType } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamSubject } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { DataSubject } from './DataSubject.js';
import { ingestMsgId } from './ingestMsgId.js';
import { IngestStateLog } from './IngestStateLog.js';
import { JetStreamStreamWriter } from './JetStreamStreamWriter.js';
import { storedMessage } from './storedMessage.js';

const J = 'INGESTJS';
const STATE = `${J}_INGEST`;
/** A stream whose own duplicate window (JetStream's least, 100 ms) is over before a successor comes. */
const SHORT = 'SHORTWINDOW';

let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await cluster.connect();
  jsm = await jetstreamManager(nc);
  js = jetstream(nc);
  await jsm.streams.add({ name: J, subjects: [`${J}.*`], num_replicas: 3, storage: StorageType.File });
  await jsm.streams.add({
    name: SHORT,
    subjects: [`${SHORT}.*`],
    num_replicas: 3,
    storage: StorageType.File,
    duplicate_window: nanos(100),
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

/** Every message of a stream's subject: its Nats-Msg-Id and data, oldest first. */
async function subjectMessages(stream: string, stateStream = J): Promise<{ seq: number; id: string | undefined; data: string }[]> {
  const subject = jetStreamSubject(stateStream, stream);
  const out: { seq: number; id: string | undefined; data: string }[] = [];
  for (let from = 0; ;) {
    const m = await storedMessage(jsm, stateStream, { next_by_subj: subject, seq: from });
    if (m === null) return out;
    out.push({ seq: m.seq, id: m.header(PubHeaders.MsgIdHdr), data: new TextDecoder().decode(m.data) });
    from = m.seq + 1;
  }
}

const writerOn = (options: { snapshotEvery?: number; jetStream?: string } = {}) =>
  new JetStreamStreamWriter({ connection: nc, jetStream: options.jetStream ?? J, timeoutMs: 3_000, ...options });

describe('JetStreamStreamWriter (real 3-node JetStream cluster, R3)', () => {
  it('writes each dedupe id once, in order, with 0-<sequence> ids', async () => {
    const writer = writerOn();
    const fence = { key: 'dedupe:a.b', token: 1 };
    expect(await writer.loadState(fence)).toEqual(new Map());
    const first = await writer.write(fence, {
      entries: [
        { dedupeId: 'a', data: '{"n":1}' },
        { dedupeId: 'b', data: '{"n":2}' },
      ],
    });
    expect(first).toMatchObject({ ok: true, written: 2, duplicates: 0 });
    const again = await writer.write(fence, {
      entries: [
        { dedupeId: 'a', data: '{"n":1}' },
        { dedupeId: 'b', data: '{"n":2}' },
        { dedupeId: 'c', data: '{"n":3}' },
      ],
    });
    expect(again).toMatchObject({ ok: true, written: 1, duplicates: 2 });
    if (!first.ok || !again.ok) return;
    expect(again.ids.slice(0, 2)).toEqual([null, null]);
    const stored = await subjectMessages('dedupe:a.b');
    expect(stored.map((m) => m.data)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(stored.map((m) => m.id)).toEqual(['a', 'b', 'c'].map((id) => ingestMsgId('dedupe:a.b', id)));
    expect([...first.ids, again.ids[2]]).toEqual(stored.map((m) => `0-${m.seq}`));
    // The `.` of the name is %2E in its subject (§17).
    expect(jetStreamSubject(J, 'dedupe:a.b')).toBe(`${J}.dedupe:a%2Eb`);
  });

  it('lands the state change of a step whose entries were all duplicates; a successor loads it', async () => {
    const writer = writerOn();
    const fence = { key: 'state-only', token: 1 };
    await writer.loadState(fence);
    await writer.write(fence, { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '1', 'b:1': 'x' } });
    const dup = await writer.write(fence, { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '2' }, stateDel: ['b:1'] });
    expect(dup).toMatchObject({ ok: true, written: 0, duplicates: 1, ids: [null] });
    const successor = writerOn();
    expect(await successor.loadState({ key: 'state-only', token: 2 })).toEqual(new Map([['cp', '2']]));
    expect((await subjectMessages('state-only')).length).toBe(1);
  });

  it('refuses an older token once a newer owner claimed the key, storing nothing of it', async () => {
    const stale = writerOn();
    const current = writerOn();
    const key = 'fenced';
    await stale.loadState({ key, token: 1 });
    await stale.write({ key, token: 1 }, { entries: [{ dedupeId: 'one', data: '1' }], stateSet: { cp: '1' } });
    // The newer owner has only claimed: nothing is published yet, and the stale one is refused already.
    expect(await current.loadState({ key, token: 2 })).toEqual(new Map([['cp', '1']]));
    const refused = await stale.write({ key, token: 1 }, { entries: [{ dedupeId: 'two', data: '2' }], stateSet: { cp: 'stale' } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'fenced', retryable: false } });
    await expect(stale.loadState({ key, token: 1 })).rejects.toMatchObject({ error: { code: 'fenced' } });
    expect(await current.write({ key, token: 2 }, { entries: [{ dedupeId: 'two', data: '2' }], stateSet: { cp: '2' } })).toMatchObject({
      ok: true,
      written: 1,
    });
    expect((await subjectMessages(key)).map((m) => m.data)).toEqual(['1', '2']);
    expect(await writerOn().loadState({ key, token: 3 })).toEqual(new Map([['cp', '2']]));
  });

  it('on take-over publishes the rest of a step its owner left half-done, skipping ids stored after it began', async () => {
    // On a stream whose duplicate window is over by then: the state log alone must tell what is stored.
    const key = 'takeover';
    const subject = jetStreamSubject(SHORT, key);
    const log = new IngestStateLog(js, jsm, `${SHORT}_INGEST`, 3_000, 100_000);
    const data = new DataSubject(js, jsm, SHORT, 3_000);
    const dead = writerOn({ jetStream: SHORT });
    await dead.loadState({ key, token: 1 });
    await dead.write({ key, token: 1 }, { entries: [{ dedupeId: 'e0', data: '0' }], stateSet: { cp: '0' } });
    // Owner 1's next step as it would leave it when killed after publishing its first entry.
    const last = await data.lastSeq(subject);
    const entries: [string, string][] = ['e1', 'e2', 'e3'].map((id, i) => [ingestMsgId(key, id), String(i + 1)]);
    const folded = await log.read(key);
    const committed = await log.append(key, { token: 1, kind: 'step', base: 0 }, { seq: last, set: { cp: '3' }, entries }, folded.lastSeq);
    expect(committed.ok).toBe(true);
    expect(await data.publish(subject, '1', ingestMsgId(key, 'e1'), last)).toMatchObject({ kind: 'stored' });
    const publishedAt = Date.now();
    // The condition is the window's end (100 ms; the server forgets ids on a timer of that period).
    await waitFor(() => Date.now() - publishedAt > 400, { timeoutMs: 2_000, message: 'the duplicate window passes' });

    const next = writerOn({ jetStream: SHORT });
    expect(await next.loadState({ key, token: 2 })).toEqual(new Map([['cp', '3']]));
    const messages = async () => (await subjectMessages(key, SHORT)).map((m) => m.data);
    expect(await messages()).toEqual(['0', '1', '2', '3']);
    expect(await next.write({ key, token: 2 }, { entries: [{ dedupeId: 'e4', data: '4' }], stateSet: { cp: '4' } })).toMatchObject({
      ok: true,
      written: 1,
    });
    expect(await messages()).toEqual(['0', '1', '2', '3', '4']);
  });

  it('refuses a stale owner’s late publish by the subject’s last sequence once the new owner has published', async () => {
    const key = 'late-publish';
    const subject = jetStreamSubject(J, key);
    const log = new IngestStateLog(js, jsm, STATE, 3_000, 100_000);
    const data = new DataSubject(js, jsm, J, 3_000);
    // Owner 1 committed a step of two entries and published the first, then froze.
    const entries: [string, string][] = [
      [ingestMsgId(key, 'p'), 'p'],
      [ingestMsgId(key, 'q'), 'q'],
    ];
    const mine = await log.append(key, { token: 1, kind: 'step', base: 0 }, { seq: 0, entries }, 0);
    if (!mine.ok) throw new Error('owner 1 could not commit its step');
    const p = await data.publish(subject, 'p', ingestMsgId(key, 'p'), 0);
    expect(p).toMatchObject({ kind: 'stored' });
    if (p.kind !== 'stored') return;
    // Owner 2 takes over (publishing q for owner 1) and writes on.
    const next = writerOn();
    await next.loadState({ key, token: 2 });
    expect(await next.write({ key, token: 2 }, { entries: [{ dedupeId: 'r', data: 'r' }] })).toMatchObject({ ok: true, written: 1 });
    // Owner 1 wakes and publishes q where it left off: refused, so nothing lands twice.
    expect(await data.publish(subject, 'q', ingestMsgId(key, 'q'), p.seq)).toEqual({ kind: 'conflict' });
    expect(await data.publish(subject, 'x', ingestMsgId(key, 'x'), p.seq)).toEqual({ kind: 'conflict' });
    expect((await subjectMessages(key)).map((m) => m.data)).toEqual(['p', 'q', 'r']);
    // And its next append to the log fails; the log's last token says it was fenced.
    expect(await log.append(key, { token: 1, kind: 'step', base: 0 }, { seq: p.seq }, mine.last)).toEqual({ ok: false });
    expect(await log.lastToken(key)).toBe(2);
  });

  it('compacts a long log into a snapshot, a record larger than a message into parts, and loads both back', async () => {
    const writer = writerOn({ snapshotEvery: 3 });
    const key = 'compact';
    const fence = { key, token: 1 };
    await writer.loadState(fence);
    const big = 'x'.repeat(1_300_000);
    for (let i = 0; i < 8; i += 1) {
      const outcome = await writer.write(fence, {
        entries: [{ dedupeId: `e${i}`, data: String(i) }],
        stateSet: { cp: String(i), [`b:${i}`]: 'h', ...(i === 1 ? { big } : {}) },
        stateDel: i >= 2 ? [`b:${i - 2}`] : [],
      });
      expect(outcome).toMatchObject({ ok: true, written: 1 });
    }
    // A snapshot after every third record (the claim counts), each of two parts once `big` is
    // set; everything below the last one is purged.
    const records = await subjectMessages(key, STATE);
    expect(records.length).toBe(2);
    const state = await writerOn().loadState({ key, token: 2 });
    expect(state.get('big')?.length).toBe(big.length);
    expect(new Map([...state].filter(([k]) => k !== 'big'))).toEqual(
      new Map([
        ['cp', '7'],
        ['b:6', 'h'],
        ['b:7', 'h'],
      ]),
    );
  }, 30_000);

  it('refuses a key that is not a stream name, an entry too large, and a missing JetStream stream, writing nothing', async () => {
    const writer = writerOn();
    expect(await writer.write({ key: 'a b', token: 1 }, { entries: [{ dedupeId: 'a', data: '1' }] })).toMatchObject({
      ok: false,
      error: { code: 'stream_invalid', retryable: false, stream: 'a b' },
    });
    await expect(writer.loadState({ key: '', token: 1 })).rejects.toMatchObject({ error: { code: 'stream_invalid' } });
    await writer.loadState({ key: 'large', token: 1 });
    const large = await writer.write(
      { key: 'large', token: 1 },
      { entries: [{ dedupeId: 'a', data: 'x'.repeat(2_000_000) }], stateSet: { cp: '1' } },
    );
    expect(large).toMatchObject({ ok: false, error: { code: 'jetstream_rejected', retryable: false } });
    expect(await subjectMessages('large')).toEqual([]);
    expect(await writerOn().loadState({ key: 'large', token: 2 })).toEqual(new Map());
    const orphan = writerOn({ jetStream: 'NOSUCH' });
    const missing = await orphan.write({ key: 'k', token: 1 }, { entries: [{ dedupeId: 'a', data: '1' }] });
    expect(missing).toMatchObject({ ok: false, error: { code: 'jetstream_rejected', retryable: false } });
    if (!missing.ok) expect(missing.error.message).toMatch(/NOSUCH does not exist/);
  });
});
