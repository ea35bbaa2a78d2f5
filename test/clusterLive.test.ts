import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { defineStream } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import { keySlot, liveChannel } from '@streamgate/redis';
import { createPublisher } from '@streamgate/server';
import type { PrivateJwk, Publisher } from '@streamgate/server';
import { waitFor } from '@streamgate/testkit';
import type { RedisCluster, RedisClusterNode, RelayProcess } from '@streamgate/testkit';
import { startClusterRelays } from './support/clusterRelays.js';
import type { ClusterRelays } from './support/clusterRelays.js';
import { mintToken } from './support/mintToken.js';

// Our writers' script on a Redis Cluster: each entry is SPUBLISHed on its stream's live channel
// (a shard channel in the stream's slot) and delivered without a read, through a slot that moves
// to another primary and through a failover. Every client gets every entry once, in order.
const PREFIX = 'cluster-live';
const streams = defineStream<{ seq: number }>(PREFIX);

let setup: ClusterRelays | undefined;
let cluster: RedisCluster;
let signingKey: PrivateJwk;
let relay: RelayProcess;
let cleanup: Array<() => unknown> = [];

beforeAll(async () => {
  setup = await startClusterRelays(['relay-live'], { RELAY_NOTIFY_SWEEP_MS: '60000' });
  ({ cluster, signingKey } = setup);
  relay = setup.relays[0] as RelayProcess;
}, 60_000);

afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

afterAll(async () => {
  await setup?.stop();
});

interface Reader {
  readonly stream: string;
  readonly seqs: number[];
  readonly ids: StreamId[];
  /** When each event arrived (performance.now()). */
  readonly at: number[];
}

async function subscribeAll(names: readonly string[], clients: number): Promise<Reader[]> {
  const readers: Reader[] = [];
  const states: Array<() => string> = [];
  for (let c = 0; c < clients; c++) {
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    cleanup.push(() => client.close());
    for (const stream of names) {
      const token = await mintToken(signingKey, { stream, redis: cluster.url });
      const reader: Reader = { stream, seqs: [], ids: [], at: [] };
      readers.push(reader);
      const sub = client.subscribe<{ seq: number }>({
        getToken: () => Promise.resolve({ token, stream, expiresAt: Date.now() + 300_000 }),
        onEvent: (data, meta) => {
          reader.seqs.push(data.seq);
          reader.ids.push(meta.id);
          reader.at.push(performance.now());
        },
      });
      states.push(() => sub.state);
    }
  }
  await waitFor(() => states.every((s) => s() === 'live'), { timeoutMs: 20_000, message: 'not every subscription went live' });
  return readers;
}

function inOrderOnce(readers: readonly Reader[], total: number): void {
  for (const r of readers) expect(r.seqs, r.stream).toEqual(Array.from({ length: total }, (_, i) => i));
}

/**
 * A fresh publisher's first concurrent writes to a Redis Cluster can fail with "Connection is
 * closed" while it connects to the nodes (seen before live messages too): one idempotent write
 * per stream, retried, warms it up without risking a second entry.
 */
async function warmUp(publisher: Publisher, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await waitFor(
      async () => (await publisher.publish(streams.for(name.slice(PREFIX.length + 1)), { seq: 0 }, { idempotencyKey: `warm-${name}` })).ok,
      { timeoutMs: 5_000, message: `the publisher never wrote to ${name}` },
    );
  }
}

async function publishOrThrow(publisher: Publisher, name: string, seq: number): Promise<StreamId> {
  const result = await publisher.publish(streams.for(name.slice(PREFIX.length + 1)), { seq });
  if (!result.ok) throw new Error(`publish ${seq} on ${name}: ${result.error.code}: ${result.error.message}`);
  return result.id;
}

async function xreadCalls(): Promise<number> {
  let calls = 0;
  for (const node of await cluster.primaries()) {
    const match = /^cmdstat_xread:calls=(\d+)/m.exec(String(await node.client().info('commandstats')));
    calls += Number(match?.[1] ?? 0);
  }
  return calls;
}

async function otherPrimary(than: RedisClusterNode): Promise<RedisClusterNode> {
  const other = (await cluster.primaries()).find((n) => n.port !== than.port);
  if (other === undefined) throw new Error('no other primary');
  return other;
}

/** Moves the key's slot from its primary to `to`: IMPORTING/MIGRATING, MIGRATE of its keys, then SETSLOT NODE on every primary. */
async function moveSlot(key: string, from: RedisClusterNode, to: RedisClusterNode): Promise<void> {
  const slot = keySlot(key);
  await to.client().call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
  await from.client().call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
  for (;;) {
    const keys = (await from.client().call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
    if (keys.length === 0) break;
    await from.client().call('MIGRATE', '127.0.0.1', to.port, '', 0, 5_000, 'KEYS', ...keys);
  }
  // As redis-cli --cluster reshard does: the target, the source, then each other primary once.
  const others = (await cluster.primaries()).filter((n) => n.port !== to.port && n.port !== from.port);
  for (const node of [to, from, ...others]) await node.client().call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
}

describe('live messages on a Redis Cluster (3 primaries, SPUBLISH in the write script)', () => {
  it('delivers script writes on every primary with no XREAD', async () => {
    const names = await cluster.keysOnEveryPrimary(`${PREFIX}:fast-`, 6);
    const readers = await subscribeAll(names, 2);
    const publisher = createPublisher({ targets: cluster.url });
    cleanup.push(() => publisher.close());
    await warmUp(publisher, names);
    const before = await xreadCalls();
    const TOTAL = 100;
    for (let seq = 1; seq < TOTAL; seq++) await Promise.all(names.map((n) => publishOrThrow(publisher, n, seq)));
    await waitFor(() => readers.every((r) => r.seqs.length >= TOTAL), { timeoutMs: 5_000, message: 'entries missing' });
    inOrderOnce(readers, TOTAL);
    expect((await xreadCalls()) - before).toBe(0);
  });

  it("delivers every entry once, in order, while the stream's slot is moved to another primary under its writes", async () => {
    const names = await cluster.keysOnEveryPrimary(`${PREFIX}:moved-`, 3);
    const moved = names[0] as string;
    const readers = await subscribeAll(names, 2);
    const publisher = createPublisher({ targets: cluster.url });
    cleanup.push(() => publisher.close());
    const from = await cluster.primaryOf(moved);
    const to = await otherPrimary(from);
    await warmUp(publisher, names);
    const TOTAL = 300;
    let migrated: Promise<void> | undefined;
    for (let seq = 1; seq < TOTAL; seq++) {
      await Promise.all(names.map((n) => publishOrThrow(publisher, n, seq)));
      if (seq === 100) migrated = moveSlot(moved, from, to);
      if (seq === 200) await migrated;
    }
    await migrated;
    expect((await cluster.primaryOf(moved)).port).toBe(to.port);
    await waitFor(() => readers.every((r) => r.seqs.length >= TOTAL), {
      timeoutMs: 10_000,
      message: () => `entries missing (${readers.filter((r) => r.seqs.length >= TOTAL).length}/${readers.length} complete)`,
    });
    inOrderOnce(readers, TOTAL);
    // Written after the move, read on the new primary by live messages again, not by reads.
    // The relay's channels followed the slot: both on the new primary, none left on the old one.
    const held = async (node: RedisClusterNode): Promise<number[]> => [
      Number(((await node.client().call('PUBSUB', 'SHARDNUMSUB', liveChannel(moved, 0) ?? '')) as unknown[])[1]),
      Number(((await node.client().call('PUBSUB', 'NUMSUB', `__keyspace@0__:${moved}`)) as unknown[])[1]),
    ];
    // [new primary, old primary] × [live channel, keyspace channel] subscribers, in the error.
    await waitFor(
      async () => {
        const seen = JSON.stringify([await held(to), await held(from)]);
        if (seen !== '[[1,1],[0,0]]') throw new Error(`channels held ${seen}`);
        return true;
      },
      { timeoutMs: 5_000, message: 'the channels of the moved stream did not follow its slot' },
    );
    const before = await xreadCalls();
    for (let seq = TOTAL; seq < TOTAL + 50; seq++) await publishOrThrow(publisher, moved, seq);
    await waitFor(() => readers.every((r) => r.stream !== moved || r.seqs.length >= TOTAL + 50), {
      timeoutMs: 5_000,
      message: 'entries after the move missing',
    });
    expect((await xreadCalls()) - before).toBe(0);
  }, 60_000);

  it('subscribes a live channel again when its primary drops it on a SETSLOT NODE naming that same primary, and stays live', async () => {
    const name = (await cluster.keysOnEveryPrimary(`${PREFIX}:again-`, 3))[0] as string;
    const channel = liveChannel(name, 0) ?? '';
    const readers = await subscribeAll([name], 1);
    const publisher = createPublisher({ targets: cluster.url });
    cleanup.push(() => publisher.close());
    await warmUp(publisher, [name]);
    const owner = await cluster.primaryOf(name);
    const admin = owner.client();
    const shardSubscribers = async (): Promise<number> => Number(((await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as unknown[])[1]);
    await waitFor(async () => (await shardSubscribers()) === 1, { timeoutMs: 5_000, message: 'the relay never held the live channel' });
    // A subscriber of our own shows the node drops the channel: Redis 7.0 answers a SETSLOT NODE
    // with an unsolicited SUNSUBSCRIBE to the slot's shard channels, even when the owner is unchanged.
    const probe = owner.client();
    const dropped = new Promise<boolean>((resolve) => probe.once('moved', () => resolve(true)));
    await probe.ssubscribe(channel);
    const readsBefore = await xreadCalls();
    await admin.call('CLUSTER', 'SETSLOT', keySlot(name), 'NODE', owner.id);
    await waitFor(() => dropped, { timeoutMs: 5_000, message: 'the node did not drop the shard channel' });
    probe.disconnect();
    // The relay subscribed it again (one subscriber: the relay's) and read the stream once, as
    // entries may have been written while no channel covered it.
    await waitFor(async () => (await shardSubscribers()) === 1 && (await xreadCalls()) > readsBefore, {
      timeoutMs: 5_000,
      message: 'the relay did not subscribe the dropped live channel again and read it',
    });
    // Then entries come live again, with no XREAD.
    const before = await xreadCalls();
    for (let seq = 1; seq <= 50; seq++) await publishOrThrow(publisher, name, seq);
    await waitFor(() => readers.every((r) => r.seqs.length >= 51), { timeoutMs: 5_000, message: 'entries after the SETSLOT missing' });
    inOrderOnce(readers, 51);
    expect((await xreadCalls()) - before).toBe(0);
  }, 60_000);

  it('resumes delivery within 1 s of the promoted replica taking its first write after its primary is SIGKILLed', async () => {
    const names = await cluster.keysOnEveryPrimary(`${PREFIX}:failover-`, 3);
    const victimKey = names[0] as string;
    const victim = await cluster.primaryOf(victimKey);
    const readers = await subscribeAll([victimKey], 2);
    const publisher = createPublisher({ targets: cluster.url, timeoutMs: 2_000 });
    cleanup.push(() => publisher.close());
    await warmUp(publisher, [victimKey]);
    let seq = 1;
    for (; seq < 20; seq++) await publishOrThrow(publisher, victimKey, seq);
    await waitFor(() => readers.every((r) => r.seqs.length >= 20), { timeoutMs: 5_000, message: 'no entries before the failover' });
    // Writes stop while the primary is down: the first write the promoted replica accepts is the
    // one the bound is measured from, and nothing is lost to asynchronous replication.
    await victim.kill('SIGKILL');
    let acceptedAt = 0;
    let firstId: StreamId | undefined;
    await waitFor(
      async () => {
        const result = await publisher.publish(streams.for(victimKey.slice(PREFIX.length + 1)), { seq });
        if (!result.ok) return false;
        acceptedAt = performance.now();
        firstId = result.id;
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 20, message: 'the replica never took a write' },
    );
    seq++;
    await waitFor(() => readers.every((r) => r.ids.includes(firstId as StreamId)), {
      timeoutMs: 10_000,
      message: 'the first write after the failover never reached the clients',
    });
    const delays = readers.map((r) => (r.at[r.ids.indexOf(firstId as StreamId)] ?? Infinity) - acceptedAt);
    for (; seq < 40; seq++) await publishOrThrow(publisher, victimKey, seq);
    await waitFor(() => readers.every((r) => r.seqs.length >= 40), { timeoutMs: 5_000, message: 'entries after the failover missing' });
    inOrderOnce(readers, 40);
    expect(Math.max(...delays)).toBeLessThan(1_000);
    await victim.restart();
    await cluster.waitHealthy();
  }, 60_000);
});
