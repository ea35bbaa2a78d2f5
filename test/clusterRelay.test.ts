import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { Subscription } from '@streamgate/client';
import type { StreamId } from '@streamgate/protocol';
import { compareStreamIds } from '@streamgate/protocol';
import type { PrivateJwk } from '@streamgate/server';
import { clusterKeySlot, waitFor } from '@streamgate/testkit';
import type { RedisCluster, RelayProcess } from '@streamgate/testkit';
import { askNode as ask, startClusterRelays, waitCount } from './support/clusterRelays.js';
import type { ClusterRelays } from './support/clusterRelays.js';
import { mintToken } from './support/mintToken.js';
import { metricValue } from './support/startFleet.js';

const STREAMS = 1_000;
const COPIES = 3;
const ROUNDS = 4;
const MOVERS = 100;
const SUBS_PER_SOCKET = 250;

interface Seen {
  seqs: number[];
  ids: StreamId[];
}

let fleet: ClusterRelays | undefined;
let cluster: RedisCluster;
let signingKey: PrivateJwk;
let relays: readonly RelayProcess[] = [];

beforeAll(async () => {
  fleet = await startClusterRelays(['relay-a', 'relay-b'], {
    RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET: '1000',
    // No sweep within the test: every entry must arrive through its node's keyspace channel,
    // so a channel subscribed on the wrong node (or not at all) shows as a missing delivery.
    RELAY_NOTIFY_SWEEP_MS: '600000',
    RELAY_READ_MODE_CHECK_MS: '300',
  });
  ({ cluster, signingKey, relays } = fleet);
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

describe('relays on a Redis Cluster', () => {
  it('delivers every entry of 1,000 streams on every primary once, in order, to 3,000 subscriptions over two relays; resumes across relays without a gap; holds a bounded number of connections per primary', async () => {
    const [relayA, relayB] = relays;
    if (relayA === undefined || relayB === undefined) throw new Error('relays not started');
    const names = await cluster.keysOnEveryPrimary('cluster-relay:', STREAMS);
    const primaries = await cluster.primaries();
    const writer = cluster.cluster({ enableAutoPipelining: true });
    await waitFor(() => writer.status === 'ready', { timeoutMs: 10_000, message: 'writer connected to the cluster' });
    const ownerOf = new Map(names.map((n) => [n, Number(writer.slots[clusterKeySlot(n)]?.[0]?.split(':')[1])]));
    expect(new Set(ownerOf.values()).size).toBe(primaries.length);
    const tokens = await Promise.all(names.map((stream) => mintToken(signingKey, { stream, redis: cluster.url })));

    const clients: RelayClient[] = [];
    const onRelay = new Map<string, { client: RelayClient | null; slot: number }>([
      [relayA.url, { client: null, slot: 0 }],
      [relayB.url, { client: null, slot: 0 }],
    ]);
    const clientOn = (url: string): RelayClient => {
      const state = onRelay.get(url);
      if (state === undefined) throw new Error(`unknown relay ${url}`);
      if (state.client === null || state.slot % SUBS_PER_SOCKET === 0) {
        state.client = new RelayClient({ urls: [url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
        clients.push(state.client);
      }
      state.slot++;
      return state.client;
    };
    const subscribe = (i: number, url: string, seen: Seen, from?: StreamId): Subscription<{ seq: number }> =>
      clientOn(url).subscribe<{ seq: number }>({
        getToken: () => Promise.resolve({ token: tokens[i] ?? '', stream: names[i] ?? '', expiresAt: Date.now() + 300_000 }),
        ...(from === undefined ? {} : { from }),
        onEvent: (data, meta) => {
          seen.seqs.push(data.seq);
          seen.ids.push(meta.id);
        },
      });

    // Subscription (stream i, copy c) is on relay A or B alternately, so each relay reads every stream.
    const seen: Seen[][] = names.map(() => Array.from({ length: COPIES }, () => ({ seqs: [], ids: [] })));
    const subs: Array<Array<Subscription<{ seq: number }>>> = names.map((_, i) =>
      Array.from({ length: COPIES }, (__, c) => subscribe(i, (i + c) % 2 === 0 ? relayA.url : relayB.url, seen[i]![c]!)),
    );
    const publishRound = async (seq: number): Promise<void> => {
      await Promise.all(names.map((n) => writer.xadd(n, '*', 'data', JSON.stringify({ seq }))));
    };
    try {
      const all = (): Array<Subscription<{ seq: number }>> => subs.flat();
      await waitCount(() => all().filter((s) => s.state === 'live').length, STREAMS * COPIES, 'subscriptions live', 30_000);

      // A subscription is live before the relay's SUBSCRIBE is confirmed (an entry written in
      // between is read once it is). Wait for the channels, so that from here on only keyspace
      // events on the right node can wake the reads.
      const byNode = primaries.map((node) => ({ node, streams: names.filter((n) => ownerOf.get(n) === node.port) }));
      const heldByBoth = async (): Promise<number> => {
        let held = 0;
        for (const { node, streams } of byNode) {
          const reply = (await ask(node, (c) => c.call('PUBSUB', 'NUMSUB', ...streams.map((n) => `__keyspace@0__:${n}`)))) as unknown[];
          held += reply.filter((count, k) => k % 2 === 1 && count === 2).length;
        }
        return held;
      };
      let held = 0;
      await waitFor(async () => (held = await heldByBoth()) === STREAMS, {
        timeoutMs: 10_000,
        message: 'every stream’s channel held by both relays on the primary serving it',
      }).catch((error: unknown) => {
        throw new Error(`channels held by both relays on the owning primary: ${held}/${STREAMS}`, { cause: error });
      });
      await publishRound(0);
      await publishRound(1);
      const holding = (rounds: number) => () => seen.flat().filter((s) => s.seqs.length >= rounds).length;
      await waitCount(holding(2), STREAMS * COPIES, 'subscriptions holding rounds 0-1', 20_000);

      // Movers: copy 0 of the first MOVERS streams that sit on relay A leaves it, misses a round,
      // and resumes on relay B from its last id.
      const movers = names
        .map((_, i) => i)
        .filter((i) => i % 2 === 0)
        .slice(0, MOVERS);
      const resumedFrom = movers.map((i) => {
        const sub = subs[i]![0]!;
        const position = sub.position;
        sub.unsubscribe();
        if (position === undefined) throw new Error(`stream ${names[i]} has no position`);
        return position;
      });
      await publishRound(2);
      movers.forEach((i, k) => (subs[i]![0] = subscribe(i, relayB.url, seen[i]![0]!, resumedFrom[k])));
      await publishRound(3);

      await waitCount(holding(ROUNDS), STREAMS * COPIES, `subscriptions holding all ${ROUNDS} rounds`, 20_000);
      const expected = Array.from({ length: ROUNDS }, (_, r) => r);
      for (const [i, copies] of seen.entries()) {
        for (const s of copies) {
          expect(s.seqs, names[i]).toEqual(expected);
          for (let k = 1; k < s.ids.length; k++) expect(compareStreamIds(s.ids[k]!, s.ids[k - 1]!)).toBeGreaterThan(0);
        }
      }
      expect(all().reduce((n, s) => n + s.duplicatesIgnored, 0)).toBe(0);
      // Not one read, incarnation check or TYPE refused (a cross-slot command would be CROSSSLOT).
      for (const relay of [relayA, relayB]) {
        const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
        // Only the multi-key paths: a slot-map refresh timing out on a loaded machine is not this test's subject.
        const errors = metrics.split('\n').filter((line) => line.startsWith('streamgate_relay_redis_errors_total'));
        for (const operation of ['xread', 'check', 'type'])
          expect(
            metricValue(metrics, 'streamgate_relay_redis_errors_total', `operation="${operation}"`),
            `${relay.service.name}: ${errors.join(', ')}`,
          ).toBe(0);
        expect(metricValue(metrics, 'streamgate_relay_read_mode', 'mode="notify"')).toBe(1);
        expect(metricValue(metrics, 'streamgate_relay_cluster_nodes_without_notify')).toBe(0);
      }

      // Connections: a command, a read and a pub/sub connection per primary and relay (plus, at
      // most, ioredis's short-lived slot-map refresher), whatever the number of streams, and the
      // revocation feed's reader and subscriber (protocol §11).
      for (const node of primaries) {
        const list = String(await ask(node, (c) => c.call('CLIENT', 'LIST')));
        for (const relay of ['relay-a', 'relay-b']) {
          const connections = list.split('\n').filter((line) => line.includes(`name=streamgate-relay:${relay}:`));
          expect(connections.length, `${relay} on primary ${node.port}`).toBeGreaterThanOrEqual(3);
          expect(connections.length, `${relay} on primary ${node.port}: ${connections.join('\n')}`).toBeLessThanOrEqual(6);
        }
        // Each relay holds each stream's channel on the primary that serves it, and only there.
        // (The revocation channel, protocol §10, is a plain channel on one node: not a stream's.)
        const channels = ((await ask(node, (c) => c.call('PUBSUB', 'CHANNELS', '__keyspace@0__:*'))) as unknown[]).length;
        expect(channels, `channels on primary ${node.port}`).toBe([...ownerOf.values()].filter((p) => p === node.port).length);
      }
      // Replicas are never read from: at most ioredis's short-lived slot-map refresher.
      for (const node of cluster.nodes.filter((n) => n.role === 'replica' && n.running)) {
        const list = String(await ask(node, (c) => c.call('CLIENT', 'LIST')));
        const connections = list.split('\n').filter((line) => line.includes('name=streamgate-relay:'));
        expect(connections.length, `relay connections on replica ${node.port}: ${connections.join('\n')}`).toBeLessThanOrEqual(2);
      }
    } finally {
      for (const c of clients) c.close();
      writer.disconnect();
    }
  }, 60_000);

  it('counts the primaries whose notify-keyspace-events lacks K and t, and stays notification-driven', async () => {
    const relayB = relays.find((r) => r.service.name === 'relay-b');
    if (relayB === undefined) throw new Error('relay-b not started');
    const gauge = async (): Promise<number> =>
      metricValue(await (await fetch(`${relayB.httpUrl}/metrics`)).text(), 'streamgate_relay_cluster_nodes_without_notify');
    const [first] = await cluster.primaries();
    if (first === undefined) throw new Error('no primary');
    await ask(first, (c) => c.call('CONFIG', 'SET', 'notify-keyspace-events', ''));
    try {
      await waitFor(async () => (await gauge()) === 1, { timeoutMs: 10_000, message: 'relay-b counted the primary without notifications' });
      const metrics = await (await fetch(`${relayB.httpUrl}/metrics`)).text();
      expect(metricValue(metrics, 'streamgate_relay_read_mode', 'mode="notify"')).toBe(1);
      expect(relayB.service.output()).toContain(`"nodes":["127.0.0.1:${first.port}"]`);
    } finally {
      await ask(first, (c) => c.call('CONFIG', 'SET', 'notify-keyspace-events', 'Kt'));
    }
    await waitFor(async () => (await gauge()) === 0, { timeoutMs: 10_000, message: 'relay-b saw every primary notify again' });
  });

  it('keeps reading by notification the streams of a primary killed and replaced by its replica', async () => {
    const relayA = relays.find((r) => r.service.name === 'relay-a');
    if (relayA === undefined) throw new Error('relay-a not started');
    const names = await cluster.keysOnEveryPrimary('cluster-failover:', 60);
    const victim = await cluster.primaryOf(names[0] ?? '');
    const owners = await Promise.all(names.map(async (n) => (await cluster.primaryOf(n)).port));
    const onVictim = names.filter((_, i) => owners[i] === victim.port);
    const tokens = await Promise.all(names.map((stream) => mintToken(signingKey, { stream, redis: cluster.url })));
    const seen = names.map((): Seen => ({ seqs: [], ids: [] }));
    const client = new RelayClient({ urls: [relayA.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    const subs = names.map((stream, i) =>
      client.subscribe<{ seq: number }>({
        getToken: () => Promise.resolve({ token: tokens[i] ?? '', stream, expiresAt: Date.now() + 300_000 }),
        onEvent: (data, meta) => {
          seen[i]?.seqs.push(data.seq);
          seen[i]?.ids.push(meta.id);
        },
      }),
    );
    const writer = cluster.cluster();
    try {
      await waitCount(() => subs.filter((s) => s.state === 'live').length, names.length, 'subscriptions live', 20_000);
      const direct = victim.client();
      // The victim's streams are written on the victim itself and WAITed for, so the promoted
      // replica holds them: this test is about channels following the slot map, not lost writes.
      for (const [i, n] of names.entries()) {
        if (owners[i] === victim.port) await direct.xadd(n, '*', 'data', JSON.stringify({ seq: 0 }));
        else await writer.xadd(n, '*', 'data', JSON.stringify({ seq: 0 }));
      }
      expect(Number(await direct.call('WAIT', '1', '5000'))).toBe(1);
      await waitCount(() => seen.filter((s) => s.seqs.length === 1).length, names.length, 'first entries delivered', 10_000);

      // Closed first: a client of a killed node only retries and complains.
      direct.disconnect();
      // One primary failing over must not take the relay out of its load balancer.
      const readiness: number[] = [];
      let watching = true;
      const watchReady = (async () => {
        while (watching) {
          readiness.push((await fetch(`${relayA.httpUrl}/readyz`)).status);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      await victim.kill();
      await cluster.waitHealthy(20_000);
      const promoted = await cluster.primaryOf(onVictim[0] ?? '');
      expect(promoted.port).not.toBe(victim.port);
      // Written while the relay may still hold the channels on the dead node: read once they are
      // subscribed on the promoted one (the sweep is off, nothing else reads them).
      for (const n of names) await writer.xadd(n, '*', 'data', JSON.stringify({ seq: 1 }));
      await waitCount(
        () => seen.filter((s) => s.seqs.length === 2).length,
        names.length,
        'entries written across the failover delivered',
        15_000,
      );
      // relay-a holds each of the victim's streams' channels on the promoted primary (once)...
      const victimChannels = onVictim.map((n) => `__keyspace@0__:${n}`);
      await waitFor(
        async () => {
          const numsub = (await ask(promoted, (c) => c.call('PUBSUB', 'NUMSUB', ...victimChannels))) as unknown[];
          return numsub.filter((count, k) => k % 2 === 1 && count === 1).length === onVictim.length;
        },
        { timeoutMs: 5_000, message: 'relay-a holds the victim’s channels on the promoted primary' },
      );
      // ...and its keyspace events wake the reads.
      for (const n of names) await writer.xadd(n, '*', 'data', JSON.stringify({ seq: 2 }));
      await waitCount(() => seen.filter((s) => s.seqs.length === 3).length, names.length, 'entries after the failover delivered', 10_000);
      for (const s of seen) expect(s.seqs).toEqual([0, 1, 2]);
      watching = false;
      await watchReady;
      expect(
        readiness.filter((status) => status !== 200),
        `readyz during the failover: ${readiness.join(' ')}`,
      ).toEqual([]);
      expect(subs.every((s) => s.state === 'live')).toBe(true);
    } finally {
      client.close();
      writer.disconnect();
    }
  }, 60_000);
});
