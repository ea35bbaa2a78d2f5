import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { jetStreamId, jetStreamSubject, parseJetStreamTarget } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { classifyRecovery } from '../core/classifyRecovery.js';
import { DATA_NOT_UTF8 } from '../redis/parseReplies.js';
import { JetStreamStreamSource } from './JetStreamStreamSource.js';
import type { JetStreamOperation } from './JetStreamSourceOptions.js';
import { jetStreamLiveSubject, jetStreamRepublish } from '@streamgate/protocol';
import { RepublishMissingError } from './RepublishMissingError.js';
import { RecordingListener } from './testing/RecordingListener.js';

let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
const sources: JetStreamStreamSource[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await cluster.connect();
  jsm = await jetstreamManager(nc);
}, 60_000);

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await cluster.stop();
});

/**
 * An R3 stream with the relay's republish. Retried: a cluster just started, or busy with another
 * file's, may answer "temporarily unavailable" for a moment (adding the same stream again is a no-op).
 */
async function createStream(name: string, config: Partial<StreamConfig> = {}): Promise<void> {
  await waitFor(() => jsm.streams.add({ name, subjects: [`${name}.*`], num_replicas: 3, republish: jetStreamRepublish(name), ...config }), {
    timeoutMs: 20_000,
    message: `stream ${name} is created`,
  });
}

function open(jetStream: string, errors: Array<{ operation: JetStreamOperation; error: Error }> = []) {
  const listener = new RecordingListener();
  const reads = { get: 0, info: 0 };
  const target = parseJetStreamTarget(`nats://${cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${jetStream}`);
  if (target === null) throw new Error('bad target');
  const source = new JetStreamStreamSource({
    target,
    listener,
    onError: (operation, error) => errors.push({ operation, error }),
    onRead: (kind) => reads[kind]++,
    pollIntervalMs: 100,
    checkIntervalMs: 200,
  });
  sources.push(source);
  return { source, listener, reads, errors };
}

async function publish(jetStream: string, stream: StreamName, data: string | Uint8Array): Promise<StreamId> {
  const ack = await jetstream(nc).publish(jetStreamSubject(jetStream, stream), data);
  return jetStreamId(ack.seq);
}

async function decide(source: JetStreamStreamSource, stream: StreamName, from: StreamId) {
  const inspected = await source.inspect(stream, from);
  if (!inspected.ok) throw new Error(inspected.error.message);
  return classifyRecovery(from, inspected.value.info, inspected.value.probeExists);
}

describe('JetStreamStreamSource', () => {
  it('reads the republish headers it relies on from the real server', async () => {
    await createStream('HDRS');
    const heard: Msg[] = [];
    const sub = nc.subscribe(jetStreamLiveSubject('HDRS', 'a.b'), { callback: (_e, m) => void heard.push(m) });
    await nc.flush();
    await publish('HDRS', 'a.b', '1');
    await publish('HDRS', 'other', '2');
    await publish('HDRS', 'a.b', '3');
    await waitFor(() => heard.length === 2, { message: 'two republished messages' });
    sub.unsubscribe();
    const headers = heard.map((m) => ['Nats-Stream', 'Nats-Subject', 'Nats-Sequence', 'Nats-Last-Sequence'].map((h) => m.headers?.get(h)));
    expect(headers).toEqual([
      ['HDRS', 'HDRS.a%2Eb', '1', '0'],
      ['HDRS', 'HDRS.a%2Eb', '3', '1'],
    ]);
    expect(heard.map((m) => m.string())).toEqual(['1', '3']);
  });

  it('delivers live entries of many streams in order, once, and one written before the watch', async () => {
    await createStream('LIVE');
    const { source, listener, reads } = open('LIVE');
    const streams = Array.from({ length: 20 }, (_, i) => `task:${i}`);
    const expected = new Map<StreamName, StreamId[]>(streams.map((s) => [s, []]));
    const before = await publish('LIVE', 'task:0', '"before"');
    expected.get('task:0')?.push(before);
    for (const stream of streams) source.watch(stream, '0-0');
    await waitFor(() => listener.ids('task:0').length === 1, { message: 'the entry written before the watch' });
    const readsBefore = reads.get;
    for (let i = 0; i < 200; i++) {
      const stream = streams[i % streams.length] as StreamName;
      expected.get(stream)?.push(await publish('LIVE', stream, JSON.stringify({ i })));
    }
    await waitFor(() => streams.every((s) => listener.ids(s).length === expected.get(s)?.length), {
      timeoutMs: 10_000,
      message: () =>
        `every live entry: ${streams.map((s) => `${s} ${listener.ids(s).length}/${expected.get(s)?.length}`).join(', ')} ${JSON.stringify(reads)}`,
    });
    for (const stream of streams) expect(listener.ids(stream)).toEqual(expected.get(stream));
    expect(listener.violations).toEqual([]);
    // Live entries came by subscription: reads are the watches' first ones, not one per entry.
    expect(reads.get - readsBefore).toBeLessThan(50);
    expect(listener.events('task:1')[0]).toEqual({
      kind: 'entry',
      entry: { id: expected.get('task:1')?.[0], fields: ['data', '{"i":1}'] },
    });
  }, 30_000);

  it('reads what was written while a stream was not watched from the stream', async () => {
    await createStream('GAP');
    const { source, listener } = open('GAP');
    source.watch('g', '0-0');
    const first = [await publish('GAP', 'g', '1'), await publish('GAP', 'g', '2')];
    await waitFor(() => listener.ids('g').length === 2, { message: 'the first two' });
    source.unwatch('g');
    const missed: StreamId[] = [];
    for (let i = 0; i < 5; i++) missed.push(await publish('GAP', 'g', String(i)));
    source.watch('g', first[1] as StreamId);
    const after = await publish('GAP', 'g', '"after"');
    await waitFor(() => listener.ids('g').length === 8, { message: 'the gap and the next entry' });
    expect(listener.ids('g')).toEqual([...first, ...missed, after]);
  });

  it('gives inspect and range what tells recovered from truncated under max_msgs_per_subject', async () => {
    await createStream('TRIM', { max_msgs_per_subject: 3 });
    const { source } = open('TRIM');
    const a1 = await publish('TRIM', 'a', '1');
    const other = await publish('TRIM', 'b', '1');
    const a2 = await publish('TRIM', 'a', '2');
    expect(await decide(source, 'a', a1)).toEqual({ recovery: 'recovered', after: a1 });
    expect(await decide(source, 'a', '0-0')).toEqual({ recovery: 'recovered', after: '0-0' });
    const a3 = await publish('TRIM', 'a', '3');
    const a4 = await publish('TRIM', 'a', '4');
    const a5 = await publish('TRIM', 'a', '5');
    // a1 and a2 are gone: entries after the position were lost.
    expect(await decide(source, 'a', a1)).toEqual({ recovery: 'truncated', after: a1 });
    expect(await decide(source, 'a', '0-0')).toEqual({ recovery: 'truncated', after: '0-0' });
    expect(await decide(source, 'a', a3)).toEqual({ recovery: 'recovered', after: a3 });
    // Not a position of this stream: another's, one beyond the last, a Redis id.
    expect(await decide(source, 'a', other)).toEqual({ recovery: 'reset', after: '0-0' });
    expect(await decide(source, 'a', '0-99')).toEqual({ recovery: 'reset', after: '0-0' });
    expect(await decide(source, 'a', '1700000000000-0')).toEqual({ recovery: 'reset', after: '0-0' });
    expect(await decide(source, 'nothing', '0-0')).toEqual({ recovery: 'recovered', after: '0-0' });

    const trimmed = await source.range('a', a2, 10);
    if (!trimmed.ok) throw new Error(trimmed.error.message);
    expect(trimmed.value.entries.map((e) => e.id)).toEqual([a3, a4, a5]);
    expect(trimmed.value.afterExists).toBe(false);
    expect(classifyRecovery(a2, trimmed.value.info, trimmed.value.afterExists).recovery).toBe('truncated');
    const page = await source.range('a', a3, 1);
    if (!page.ok) throw new Error(page.error.message);
    expect(page.value.entries.map((e) => e.id)).toEqual([a4]);
    expect(page.value.afterExists).toBe(true);
    expect(classifyRecovery(a3, page.value.info, page.value.afterExists).recovery).toBe('recovered');

    // A message deleted inside the retained range is a retraction: nothing after it is missing.
    await jsm.streams.deleteMessage('TRIM', Number(a4.slice(2)));
    expect(await decide(source, 'a', a4)).toEqual({ recovery: 'recovered', after: a4 });
    const info = await source.inspect('a');
    expect(info.ok && info.value.info).toMatchObject({ lastGeneratedId: a5, firstEntryId: a3 });
    // So is the subject's newest: limits never remove it while older ones stay.
    await jsm.streams.deleteMessage('TRIM', Number(a5.slice(2)));
    expect(await decide(source, 'a', a5)).toEqual({ recovery: 'recovered', after: a5 });

    // A subject emptied (purged here; max_age does the same) lost what followed a position,
    // unless nothing at all was written after it.
    const c1 = await publish('TRIM', 'c', '1');
    const c2 = await publish('TRIM', 'c', '2');
    await jsm.streams.purge('TRIM', { filter: jetStreamSubject('TRIM', 'c') });
    expect(await decide(source, 'c', c1)).toEqual({ recovery: 'truncated', after: c1 });
    expect(await decide(source, 'c', c2)).toEqual({ recovery: 'recovered', after: c2 });
    expect(await source.inspect('c')).toEqual({ ok: true, value: { info: null, probeExists: false } });
  });

  it('resets watched streams when the JetStream stream is deleted and created again', async () => {
    await createStream('REC');
    const { source, listener } = open('REC');
    source.watch('r', '0-0');
    const old = [await publish('REC', 'r', '1'), await publish('REC', 'r', '2'), await publish('REC', 'r', '3')];
    await waitFor(() => listener.ids('r').length === 3, { message: 'the first incarnation' });
    await jsm.streams.delete('REC');
    await createStream('REC');
    const fresh = [await publish('REC', 'r', '"a"'), await publish('REC', 'r', '"b"')];
    await waitFor(() => listener.trace('r').length === 6, {
      timeoutMs: 10_000,
      message: () => `reset and the new incarnation: ${listener.trace('r').join(' ')}`,
    });
    expect(listener.trace('r')).toEqual([...old, 'reset', ...fresh]);
    // A position of the old incarnation beyond the new one's last sequence.
    expect(await decide(source, 'r', old[2] as StreamId)).toEqual({ recovery: 'reset', after: '0-0' });
    expect(listener.violations).toEqual([]);
  }, 30_000);

  it('reads a stream from its start when a recreation was seen between its first read and its watch', async () => {
    await createStream('RACE');
    const { source, listener } = open('RACE');
    for (let i = 0; i < 4; i++) await publish('RACE', 'x', String(i));
    const started = await source.inspect('x');
    const position = started.ok ? started.value.info?.lastGeneratedId : undefined;
    expect(position).toBe('0-4');
    await jsm.streams.delete('RACE');
    await createStream('RACE');
    // Past the old position, so no sequence below it gives the recreation away later.
    for (let i = 0; i < 4; i++) await publish('RACE', 'y', String(i));
    const fresh = [await publish('RACE', 'x', '"new"')];
    // Another stream's resume sees the new incarnation before the watch is made.
    await source.inspect('y', '0-0');
    source.watch('x', position as StreamId);
    await waitFor(() => listener.trace('x').length === 2, { message: () => `reset and the new entry: ${listener.trace('x').join(' ')}` });
    expect(listener.trace('x')).toEqual(['reset', ...fresh]);
  });

  it('marks a payload that is not UTF-8 malformed, live and in a range', async () => {
    await createStream('UTF');
    const { source, listener } = open('UTF');
    source.watch('u', '0-0');
    const bad = await publish('UTF', 'u', new Uint8Array([0x22, 0xff, 0xfe, 0x22]));
    await waitFor(() => listener.ids('u').length === 1, { message: 'the entry' });
    expect(listener.events('u')[0]).toMatchObject({ kind: 'entry', entry: { id: bad, malformed: DATA_NOT_UTF8 } });
    const page = await source.range('u', '0-0', 10);
    expect(page.ok && page.value.entries[0]?.malformed).toBe(DATA_NOT_UTF8);
  });

  it('reports a stream without republish and polls it', async () => {
    await createStream('POLL', { republish: undefined });
    const errors: Array<{ operation: JetStreamOperation; error: Error }> = [];
    const { source, listener } = open('POLL', errors);
    source.watch('p', '0-0');
    const ids = [await publish('POLL', 'p', '1'), await publish('POLL', 'p', '2')];
    await waitFor(() => listener.ids('p').length === 2, { message: 'polled entries' });
    expect(listener.ids('p')).toEqual(ids);
    expect(source.republish).toBe('none');
    expect(errors.filter((e) => e.operation === 'republish').map((e) => e.error)).toEqual([expect.any(RepublishMissingError)]);
  });
});
