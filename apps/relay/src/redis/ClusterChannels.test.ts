import { describe, expect, it } from 'vitest';
import type { StreamName } from '@streamgate/protocol';
import { ClusterChannels } from './ClusterChannels.js';
import { FakeClusterPubSub } from './testing/FakeClusterPubSub.js';
import { ManualClock, settle } from '@streamgate/protocol/testing';

/** Three primaries: a serves slots 0–99, b 100–199, c 200–299. */
function setup(options: { batchSize?: number } = {}) {
  const pubsub = new FakeClusterPubSub();
  pubsub.assign(0, 99, 'a:1');
  pubsub.assign(100, 199, 'b:1');
  pubsub.assign(200, 299, 'c:1');
  const watched = new Set<StreamName>();
  const confirmed: StreamName[] = [];
  const moved: StreamName[] = [];
  const channels = new ClusterChannels({
    pubsub,
    clock: new ManualClock(),
    wanted: (key) => watched.has(key),
    watched: () => watched,
    onConfirmed: (keys) => confirmed.push(...keys),
    onMoved: (key) => moved.push(key),
    onError: (error) => {
      throw error;
    },
    ...options,
  });
  const watch = (...keys: StreamName[]): void => {
    for (const key of keys) {
      watched.add(key);
      channels.changed(key);
    }
  };
  const unwatch = (...keys: StreamName[]): void => {
    for (const key of keys) {
      watched.delete(key);
      channels.changed(key);
    }
  };
  const on = (node: string): StreamName[] => [...(pubsub.subscriberOf(node)?.channels ?? [])].sort();
  return { pubsub, channels, confirmed, moved, watch, unwatch, on };
}

describe('ClusterChannels', () => {
  it('subscribes each key on the primary serving its slot, over one connection per primary, in bounded batches', async () => {
    const { pubsub, channels, confirmed, watch, on } = setup({ batchSize: 50 });
    await settle();
    expect(channels.ready).toBe(true);
    const keys = Array.from({ length: 300 }, (_, slot) => `${slot}:s`);
    watch(...keys);
    await settle();
    expect(pubsub.connections.map((c) => c.node).sort()).toEqual(['a:1', 'b:1', 'c:1']);
    expect(on('a:1')).toEqual(keys.slice(0, 100).sort());
    expect(on('b:1')).toEqual(keys.slice(100, 200).sort());
    expect(on('c:1')).toEqual(keys.slice(200).sort());
    for (const c of pubsub.connections) expect(Math.max(...c.commands.map((cmd) => cmd.keys.length))).toBeLessThanOrEqual(50);
    expect(channels.channelCount).toBe(300);
    expect([...confirmed].sort()).toEqual([...keys].sort());
    expect(channels.isSubscribed('150:s')).toBe(true);
  });

  it('moves a key whose slot changed primary: unsubscribed on the old, subscribed on the new, then read', async () => {
    const { pubsub, channels, confirmed, moved, watch, on } = setup();
    watch('10:x', '11:y', '150:z');
    await settle();
    confirmed.length = 0;
    // Resharding: slot 10 moves from a to b.
    pubsub.assign(10, 10, 'b:1');
    pubsub.announce();
    await settle();
    expect(on('a:1')).toEqual(['11:y']);
    expect(on('b:1')).toEqual(['10:x', '150:z']);
    expect(pubsub.subscriberOf('a:1')?.commands.at(-1)).toEqual({ kind: 'unsubscribe', keys: ['10:x'] });
    expect(confirmed).toEqual(['10:x']);
    expect(moved).toEqual(['10:x']);
    expect(channels.nodeOf('10:x')).toBe('b:1');
    // Nothing else moved, nothing else was sent again.
    expect(pubsub.subscriberOf('c:1')?.commands).toEqual([]);
  });

  it('gives a promoted replica a connection and closes the lost primary’s, its keys read once subscribed on the new one', async () => {
    const { pubsub, confirmed, moved, watch, on } = setup();
    watch('5:a', '50:b', '120:c', '250:d');
    await settle();
    confirmed.length = 0;
    const lost = pubsub.subscriberOf('a:1');
    lost?.drop();
    // Failover: a's replica a2 now serves a's slots.
    pubsub.assign(0, 99, 'a2:1');
    pubsub.announce();
    await settle();
    expect(lost?.disconnected).toBe(true);
    expect(on('a2:1')).toEqual(['50:b', '5:a']);
    expect([...confirmed].sort()).toEqual(['50:b', '5:a']);
    // What the lost primary acknowledged may be missing on its replica: their incarnations are looked at.
    expect([...moved].sort()).toEqual(['50:b', '5:a']);
    expect(on('b:1')).toEqual(['120:c']);
    expect(pubsub.connections.map((c) => c.node).sort()).toEqual(['a2:1', 'a:1', 'b:1', 'c:1']);
  });

  it('subscribes a reconnected node’s keys again and reads them; the other nodes are left alone', async () => {
    const { pubsub, channels, confirmed, watch, on } = setup();
    watch('1:a', '2:b', '101:c');
    await settle();
    confirmed.length = 0;
    const a = pubsub.subscriberOf('a:1');
    a?.drop();
    expect(channels.ready).toBe(true);
    expect(channels.isSubscribed('1:a')).toBe(false);
    a?.becomeReady();
    await settle();
    expect(channels.isSubscribed('1:a')).toBe(true);
    expect(on('a:1')).toEqual(['1:a', '2:b']);
    expect([...confirmed].sort()).toEqual(['1:a', '2:b']);
    expect(pubsub.subscriberOf('b:1')?.commands).toHaveLength(1);
  });

  it('subscribes a node’s keys again when it drops channels on its own with the slot still its, and reads them', async () => {
    const { pubsub, channels, confirmed, watch, on } = setup();
    watch('1:a', '2:b', '101:c');
    await settle();
    confirmed.length = 0;
    const a = pubsub.subscriberOf('a:1');
    // CLUSTER SETSLOT 1 NODE <a>, a's own slot: Redis 7.0 sends SUNSUBSCRIBE for its shard channels.
    a?.dropChannels(['1:a']);
    await settle();
    expect(a?.commands.map((c) => [c.kind, ...[...c.keys].sort()])).toEqual([
      ['subscribe', '1:a', '2:b'],
      ['subscribe', '1:a', '2:b'],
    ]);
    expect(on('a:1')).toEqual(['1:a', '2:b']);
    expect(channels.isSubscribed('1:a')).toBe(true);
    expect([...confirmed].sort()).toEqual(['1:a', '2:b']);
    expect(pubsub.subscriberOf('b:1')?.commands).toHaveLength(1);
  });

  it('sends a subscribe that was in flight when the node dropped channels again, once it is confirmed', async () => {
    const { pubsub, channels, watch, on } = setup();
    await settle();
    watch('1:a');
    const a = pubsub.subscriberOf('a:1');
    // Its SUBSCRIBE is sent, not yet confirmed: the confirmation may predate the drop.
    a?.dropChannels(['1:a']);
    await settle();
    expect(a?.commands.map((c) => [c.kind, ...c.keys])).toEqual([
      ['subscribe', '1:a'],
      ['subscribe', '1:a'],
    ]);
    expect(on('a:1')).toEqual(['1:a']);
    expect(channels.isSubscribed('1:a')).toBe(true);
  });

  it('still unsubscribes on the old primary a key whose slot moved while that node dropped channels', async () => {
    const { pubsub, watch, on } = setup();
    watch('1:a', '2:b');
    await settle();
    // A migration: the old primary drops the slot's shard channels, then the slot map moves it;
    // meanwhile nothing can be sent there (as when the SUBSCRIBE sent again is refused, MOVED).
    const a = pubsub.subscriberOf('a:1');
    if (a === undefined) throw new Error('no connection to a');
    a.subscriberReady = false;
    // The fake holds one channel per key: here it stands for 1:a's keyspace channel, which stays.
    a.dropChannels([]);
    pubsub.assign(1, 1, 'b:1');
    pubsub.announce();
    a.becomeReady();
    await settle();
    expect(on('a:1')).toEqual(['2:b']);
    expect(on('b:1')).toEqual(['1:a']);
  });

  it('holds no channel for a key whose slot has no primary (mid-failover) until one serves it', async () => {
    const { pubsub, confirmed, moved, watch, on } = setup();
    pubsub.assign(0, 99, undefined);
    pubsub.announce();
    watch('7:k');
    await settle();
    expect(confirmed).toEqual([]);
    expect(pubsub.subscriberOf('a:1')).toBeUndefined();
    pubsub.assign(0, 99, 'a3:1');
    pubsub.announce();
    await settle();
    expect(on('a3:1')).toEqual(['7:k']);
    expect(confirmed).toEqual(['7:k']);
    // Never served before: nothing moved.
    expect(moved).toEqual([]);
    // Served, then left without a primary, then served by another: moved.
    pubsub.assign(0, 99, undefined);
    pubsub.announce();
    pubsub.assign(0, 99, 'a4:1');
    pubsub.announce();
    await settle();
    expect(moved).toEqual(['7:k']);
    expect(on('a4:1')).toEqual(['7:k']);
  });

  it('unsubscribes an unwatched key on its node, and closes every connection on close', async () => {
    const { pubsub, channels, watch, unwatch, on } = setup();
    watch('3:a', '4:b');
    await settle();
    unwatch('3:a');
    await settle();
    expect(on('a:1')).toEqual(['4:b']);
    expect(channels.nodeOf('3:a')).toBeUndefined();
    channels.close();
    expect(pubsub.connections.every((c) => c.disconnected)).toBe(true);
  });

  it('is ready once the slot map is known and a primary’s connection is; one primary down does not make it unready', async () => {
    const pubsub = new FakeClusterPubSub();
    pubsub.autoReady = false;
    const channels = new ClusterChannels({
      pubsub,
      clock: new ManualClock(),
      wanted: () => true,
      watched: () => [],
      onConfirmed: () => undefined,
      onMoved: () => undefined,
      onError: () => undefined,
    });
    expect(channels.ready).toBe(false);
    pubsub.assign(0, 9, 'a:1');
    pubsub.assign(10, 19, 'b:1');
    pubsub.announce();
    expect(channels.ready).toBe(false);
    pubsub.subscriberOf('a:1')?.becomeReady();
    await settle();
    expect(channels.ready).toBe(true);
    pubsub.subscriberOf('b:1')?.becomeReady();
    pubsub.subscriberOf('a:1')?.drop();
    expect(channels.ready).toBe(true);
    pubsub.subscriberOf('b:1')?.drop();
    expect(channels.ready).toBe(false);
  });
});
