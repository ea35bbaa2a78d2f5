import { afterAll, beforeAll, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamId, jetStreamSubject } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { JetStreamStreamSource } from './JetStreamStreamSource.js';
import { jetStreamRepublish } from '@streamgate/protocol';
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
 * An R3 stream with the relay's republish. Retried: after a server was frozen the cluster may
 * still be electing its meta leader, and JetStream answers "temporarily unavailable" meanwhile
 * (adding a stream again with the same configuration is a no-op).
 */
async function addStream(name: string): Promise<void> {
  await waitFor(() => jsm.streams.add({ name, subjects: [`${name}.*`], num_replicas: 3, republish: jetStreamRepublish(name) }), {
    timeoutMs: 20_000,
    message: `stream ${name} is created`,
  });
}

/** A source seeded with node `seed` alone: it learns the others from the cluster and reconnects to them. */
function open(jetStream: string, seed: number, listener: RecordingListener, onReconnect: () => void): JetStreamStreamSource {
  const source = new JetStreamStreamSource({
    target: { kind: 'jetstream', tls: false, servers: [`127.0.0.1:${cluster.nodes[seed]?.port}`], stream: jetStream },
    listener,
    onError: () => undefined,
    onRead: () => undefined,
    onReconnect,
    checkIntervalMs: 200,
    requestTimeoutMs: 1_000,
    pingIntervalMs: 500,
  });
  sources.push(source);
  return source;
}

it('reads what was written while its server was frozen, once it has moved to another', async () => {
  await addStream('CUT');
  const leader = await cluster.streamLeader('CUT');
  const seed = (leader + 1) % cluster.nodes.length;
  const listener = new RecordingListener();
  let reconnects = 0;
  const source = open('CUT', seed, listener, () => reconnects++);
  source.watch('c', '0-0');
  // Written through the leader's server, which stays up.
  const js = jetstream(await cluster.connect({ servers: [`127.0.0.1:${cluster.nodes[leader]?.port}`] }));
  const written = [jetStreamId((await js.publish('CUT.c', '0')).seq)];
  await waitFor(() => listener.ids('c').length === 1, { message: 'the first entry' });
  // The republished copies of these go to the frozen server and are lost there; nothing written
  // later reveals the gap, so only the read after the reconnect can deliver them.
  cluster.freeze(seed);
  try {
    for (let i = 1; i <= 10; i++) written.push(jetStreamId((await js.publish('CUT.c', String(i))).seq));
    await waitFor(() => reconnects > 0, { timeoutMs: 10_000, message: 'the source leaves the frozen server' });
    await waitFor(() => listener.ids('c').length === written.length, { timeoutMs: 10_000, message: 'the entries written meanwhile' });
    expect(listener.trace('c')).toEqual(written);
  } finally {
    cluster.thaw(seed);
  }
  await waitFor(
    async () => {
      const info = await jsm.streams.info('CUT');
      return (info.cluster?.replicas ?? []).every((r) => r.current);
    },
    { timeoutMs: 20_000, message: 'the thawed server is a current replica again' },
  );
}, 60_000);

const STREAMS = ['f:0', 'f:1', 'f:2', 'f:3', 'f:4'];
const WRITES = 300;

/**
 * Writes WRITES entries round the STREAMS, each retried until acknowledged, calling `at` before
 * each; returns the acknowledged ids per stream. A write whose acknowledgement was lost is sent
 * again under its id, so the stream keeps it once.
 */
async function writeAll(jetStream: string, at: (i: number) => void): Promise<Map<string, StreamId[]>> {
  // Its own connection, quick to leave a frozen server, so writes go on through the new leader.
  const js = jetstream(await cluster.connect({ pingInterval: 500, maxPingOut: 2, timeout: 1_000 }));
  const acked = new Map<string, StreamId[]>(STREAMS.map((s) => [s, []]));
  for (let i = 0; i < WRITES; i++) {
    at(i);
    const stream = STREAMS[i % STREAMS.length] as string;
    const ack = await waitFor(
      () => js.publish(jetStreamSubject(jetStream, stream), JSON.stringify(i), { msgID: `w${i}`, timeout: 1_000 }),
      {
        timeoutMs: 30_000,
        message: `write ${i} is acknowledged`,
      },
    );
    acked.get(stream)?.push(jetStreamId(ack.seq));
  }
  return acked;
}

async function expectEachOnceInOrder(listener: RecordingListener, acked: Map<string, StreamId[]>): Promise<void> {
  await waitFor(() => STREAMS.every((s) => listener.ids(s).length >= (acked.get(s)?.length ?? 0)), {
    timeoutMs: 20_000,
    message: () => `every acknowledged entry: ${STREAMS.map((s) => `${listener.ids(s).length}/${acked.get(s)?.length}`).join(' ')}`,
  });
  for (const stream of STREAMS) expect(listener.trace(stream)).toEqual(acked.get(stream));
  expect(listener.violations).toEqual([]);
}

it('delivers every acknowledged entry once, in order, when the leader it is connected to freezes mid-publish', async () => {
  await addStream('FROZEN');
  const leader = await cluster.streamLeader('FROZEN');
  const listener = new RecordingListener();
  const source = open('FROZEN', leader, listener, () => undefined);
  for (const stream of STREAMS) source.watch(stream, '0-0');
  await waitFor(() => source.healthy, { message: 'the source connects' });
  let frozen = false;
  try {
    const acked = await writeAll('FROZEN', (i) => {
      if (i !== WRITES / 3) return;
      cluster.freeze(leader);
      frozen = true;
    });
    await expectEachOnceInOrder(listener, acked);
  } finally {
    if (frozen) cluster.thaw(leader);
  }
  // The thawed server, a follower now, must not hand the source anything twice.
  await waitFor(
    async () => {
      const info = await jsm.streams.info('FROZEN');
      return (info.cluster?.replicas ?? []).every((r) => r.current);
    },
    { timeoutMs: 20_000, message: 'the thawed server is a current replica again' },
  );
  expect(listener.violations).toEqual([]);
  expect(STREAMS.reduce((n, s) => n + listener.ids(s).length, 0)).toBe(WRITES);
}, 60_000);

it('delivers every acknowledged entry once, in order, when the leader it is connected to dies mid-publish', async () => {
  await addStream('FAIL');
  const leader = await cluster.streamLeader('FAIL');
  const listener = new RecordingListener();
  let reconnects = 0;
  // Connected to the leader's server: the connection is cut when the leader dies, too.
  const source = open('FAIL', leader, listener, () => reconnects++);
  for (const stream of STREAMS) source.watch(stream, '0-0');
  await waitFor(() => source.healthy, { message: 'the source connects' });
  let killed: Promise<void> | undefined;
  const acked = await writeAll('FAIL', (i) => {
    if (i === WRITES / 3) killed = cluster.kill(leader);
  });
  await killed;
  await expectEachOnceInOrder(listener, acked);
  expect(reconnects).toBeGreaterThan(0);
  await waitFor(() => source.healthy, { timeoutMs: 10_000, message: 'the source is healthy again' });
}, 60_000);
