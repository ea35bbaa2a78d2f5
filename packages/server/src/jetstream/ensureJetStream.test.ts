import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { nanos } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineStream } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { createJetStreamWriter } from './createJetStreamWriter.js';
import { ensureJetStream } from './ensureJetStream.js';
import { jetStreamLiveSubject } from '@streamgate/protocol';

const notes = defineStream<{ n: number }>('notes');

describe('ensureJetStream (real 3-node JetStream cluster)', () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    nc = await cluster.connect();
    jsm = await jetstreamManager(nc);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('creates the stream as relays need it, and republishes every stored entry on its live subject', async () => {
    const created = await ensureJetStream(jsm, { stream: 'LIVE' });
    if (!created.ok) throw new Error(created.error.message);
    expect(created.created).toBe(true);
    expect(created.info.config).toMatchObject({
      name: 'LIVE',
      subjects: ['LIVE.*'],
      storage: 'file',
      retention: 'limits',
      num_replicas: 3,
      republish: { src: 'LIVE.>', dest: '$SG.live.LIVE.>' },
    });

    const stream = notes.for('a.b');
    const live = jetStreamLiveSubject('LIVE', stream.name);
    expect(live).toBe('$SG.live.LIVE.notes:a%2Eb');
    const received: Msg[] = [];
    const subscription = nc.subscribe(live, { callback: (_error, message) => void received.push(message) });
    await nc.flush();
    const writer = createJetStreamWriter({ connection: nc, stream: 'LIVE' });
    const result = await writer.publish(stream, { n: 1 });
    if (!result.ok) throw new Error(result.error.message);
    const message = await waitFor(() => received[0], { timeoutMs: 5_000, message: `the entry is republished on ${live}` });
    expect(message.string()).toBe('{"n":1}');
    expect(`0-${message.headers?.get('Nats-Sequence')}`).toBe(result.id);
    subscription.unsubscribe();
    await writer.close();
  });

  it('accepts the same config again without changing it', async () => {
    const first = await ensureJetStream(
      jsm,
      { stream: 'AGAIN' },
      { maxMsgsPerSubject: 100, maxAgeMs: 3_600_000, duplicateWindowMs: 60_000 },
    );
    const again = await ensureJetStream(
      jsm,
      { stream: 'AGAIN' },
      { maxMsgsPerSubject: 100, maxAgeMs: 3_600_000, duplicateWindowMs: 60_000 },
    );
    // Limits not given are not checked.
    const looser = await ensureJetStream(jsm, { stream: 'AGAIN' });
    if (!first.ok || !again.ok || !looser.ok) throw new Error('ensureJetStream failed');
    expect([first.created, again.created, looser.created]).toEqual([true, false, false]);
    expect(again.info.config).toMatchObject({ max_msgs_per_subject: 100, max_age: nanos(3_600_000), duplicate_window: nanos(60_000) });
  });

  it('reports a conflicting existing stream by field and leaves it as it is', async () => {
    const made = await ensureJetStream(jsm, { stream: 'CONFLICT' }, { maxMsgsPerSubject: 10 });
    if (!made.ok) throw new Error(made.error.message);

    const replicas = await ensureJetStream(jsm, { stream: 'CONFLICT' }, { replicas: 1 });
    expect(!replicas.ok && replicas.error).toMatchObject({
      code: 'jetstream_stream_conflict',
      retryable: false,
      stream: 'CONFLICT',
      field: 'num_replicas',
      wanted: '1',
      actual: '3',
    });
    const limit = await ensureJetStream(jsm, { stream: 'CONFLICT' }, { maxMsgsPerSubject: 20 });
    expect(!limit.ok && limit.error).toMatchObject({
      code: 'jetstream_stream_conflict',
      field: 'max_msgs_per_subject',
      wanted: '20',
      actual: '10',
    });
    expect((await jsm.streams.info('CONFLICT')).config).toMatchObject({ num_replicas: 3, max_msgs_per_subject: 10 });

    // A stream someone made by hand, without the live republish.
    await jsm.streams.add({ name: 'HANDMADE', subjects: ['HANDMADE.*'], num_replicas: 3 });
    const handmade = await ensureJetStream(jsm, { stream: 'HANDMADE' });
    expect(!handmade.ok && handmade.error).toMatchObject({ code: 'jetstream_stream_conflict', field: 'republish.src', actual: 'unset' });
    expect(!handmade.ok && handmade.error.message).toContain('HANDMADE');
    expect((await jsm.streams.info('HANDMADE')).config.republish).toBeUndefined();
  });

  it('lets processes starting together agree on one stream, and reports the one that wants another', async () => {
    const same = await Promise.all([1, 2, 3].map(() => ensureJetStream(jsm, { stream: 'RACE' })));
    expect(same.map((result) => result.ok)).toEqual([true, true, true]);
    // nats-server 2.9 leaves the second of two differing adds unanswered: a short timeout keeps the test quick.
    const quick = await jetstreamManager(nc, { timeout: 1_500 });
    const differ = await Promise.all([3, 1].map((replicas) => ensureJetStream(quick, { stream: 'RACE2' }, { replicas })));
    const codes = differ.map((result) =>
      result.ok ? 'ok' : `${result.error.code} ${result.error.code === 'jetstream_stream_conflict' ? result.error.field : ''}`,
    );
    expect(codes.sort()).toEqual(['jetstream_stream_conflict num_replicas', 'ok']);
  });

  it('refuses options JetStream could not honour before asking it', async () => {
    await expect(ensureJetStream(jsm, { stream: 'BAD' }, { replicas: 0 })).rejects.toThrow(RangeError);
    await expect(ensureJetStream(jsm, { stream: 'BAD' }, { replicas: 7 })).rejects.toThrow(/at most 5/);
    await expect(ensureJetStream(jsm, { stream: 'BAD' }, { maxAgeMs: 1_000, duplicateWindowMs: 2_000 })).rejects.toThrow(/must not exceed/);
  });
});
