import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { defineStream } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import { createPublisher } from '@streamgate/server';
import type { Publisher } from '@streamgate/server';
import { DeadlineError, startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisCluster } from '@streamgate/testkit';
import { startClusterRelays } from './support/clusterRelays.js';
import type { ClusterRelays } from './support/clusterRelays.js';
import { mintToken } from './support/mintToken.js';

// deploy/README recommends `cluster-require-full-coverage no` for the streams' cluster: while one
// primary's slots fail over, the other primaries keep taking writes and serving reads, so only
// the streams on the lost primary pause. This is that promise under a SIGKILLed primary, and,
// for contrast, Redis's own default (`yes`), under which every primary refuses every key until
// the replica is promoted.
const PREFIX = 'coverage';
const streams = defineStream<{ seq: number }>(PREFIX);
const STREAMS = 9;
// Load pacing: at most one publish per stream this often (a rate; nothing waits on it).
const PUBLISH_INTERVAL_MS = 5;

interface Attempt {
  readonly at: number;
  readonly ok: boolean;
  readonly id?: StreamId;
  readonly error?: string;
}

/** Publishes `{seq}` to one stream, one at a time, until stopped; every attempt is kept with its time. */
function publishOn(publisher: Publisher, stream: string): { attempts: Attempt[]; stop(): Promise<void> } {
  const attempts: Attempt[] = [];
  const stopped = new AbortController();
  const ref = streams.for(stream.slice(PREFIX.length + 1));
  const loop = (async () => {
    for (let seq = 0; !stopped.signal.aborted; seq++) {
      const sentAt = performance.now();
      const result = await publisher.publish(ref, { seq });
      attempts.push(
        result.ok
          ? { at: performance.now(), ok: true, id: result.id }
          : { at: performance.now(), ok: false, error: `${result.error.code}: ${result.error.message}` },
      );
      await sleep(Math.max(0, sentAt + PUBLISH_INTERVAL_MS - performance.now()), undefined, { signal: stopped.signal }).catch(
        (error: unknown) => {
          if (!stopped.signal.aborted) throw error; // only stop() may cut a pause short
        },
      );
    }
  })();
  return {
    attempts,
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}

/** Kills the primary of `names[0]`, publishing to every stream throughout, until its slots are served again and taking writes. */
async function killPrimaryWhilePublishing(cluster: RedisCluster, names: readonly string[]) {
  const victim = await cluster.primaryOf(names[0] ?? '');
  const owners = await Promise.all(names.map(async (n) => (await cluster.primaryOf(n)).port));
  const onVictim = new Set(names.filter((_, i) => owners[i] === victim.port));
  const publisher = createPublisher({ targets: cluster.url, maxLen: 1_000_000 });
  const loops = new Map(names.map((n) => [n, publishOn(publisher, n)]));
  const okCount = (n: string): number => loops.get(n)?.attempts.filter((a) => a.ok).length ?? 0;
  try {
    await waitFor(() => names.every((n) => okCount(n) >= 20), { timeoutMs: 20_000, message: 'publishing never got going' });
    const killedAt = performance.now();
    await victim.kill('SIGKILL');
    // primaryOf throws while no live primary serves the slot: waitFor counts that as not yet.
    await waitFor(async () => (await cluster.primaryOf(names[0] ?? '')).port !== victim.port, {
      timeoutMs: 30_000,
      message: 'the victim’s replica was never promoted',
    });
    const promotedAt = performance.now();
    const before = new Map(names.map((n) => [n, okCount(n)]));
    await waitFor(() => names.every((n) => okCount(n) >= (before.get(n) ?? 0) + 20), {
      timeoutMs: 20_000,
      message: 'publishing did not go on after the promotion',
    });
    return { onVictim, killedAt, promotedAt, attempts: new Map([...loops].map(([n, l]) => [n, l.attempts])) };
  } finally {
    await Promise.all([...loops.values()].map((l) => l.stop()));
    await publisher.close();
  }
}

/** Failed attempts after `since`, and the longest run of time with no successful write, per stream. */
function outage(attempts: readonly Attempt[], since: number): { failed: Attempt[]; longestMs: number } {
  const after = attempts.filter((a) => a.at >= since);
  let last = since;
  let longestMs = 0;
  for (const a of after) {
    if (!a.ok) continue;
    longestMs = Math.max(longestMs, a.at - last);
    last = a.at;
  }
  return { failed: after.filter((a) => !a.ok), longestMs };
}

describe('a primary killed on a cluster with cluster-require-full-coverage no (the recommended setting)', () => {
  let setup: ClusterRelays | undefined;
  afterAll(async () => {
    await setup?.stop();
  });

  it('every write to the other primaries’ slots succeeds throughout, and their subscribers on a relay get every entry once, in order', async () => {
    setup = await startClusterRelays(['relay-cov'], {});
    const { cluster, signingKey, relays } = setup;
    const relay = relays[0];
    if (relay === undefined) throw new Error('relay missing');
    const names = await cluster.keysOnEveryPrimary(`${PREFIX}:`, STREAMS);
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    const received = new Map<string, Array<{ id: StreamId; at: number }>>(names.map((n) => [n, []]));
    try {
      for (const stream of names) {
        const token = await mintToken(signingKey, { stream, redis: cluster.url });
        client.subscribe<{ seq: number }>({
          getToken: () => Promise.resolve({ token, stream, expiresAt: Date.now() + 300_000 }),
          onEvent: (_, meta) => received.get(stream)?.push({ id: meta.id, at: performance.now() }),
        });
      }
      const run = await killPrimaryWhilePublishing(cluster, names);
      const others = names.filter((n) => !run.onVictim.has(n));
      expect(others.length).toBeGreaterThanOrEqual(STREAMS - STREAMS / 3);

      // The other primaries' writes: not one refused, from the kill to the end.
      const otherOutages = others.map((n) => ({ stream: n, ...outage(run.attempts.get(n) ?? [], run.killedAt) }));
      // The victim's streams did stop taking writes: the failover happened under the publishers.
      const victimOutages = [...run.onVictim].map((n) => outage(run.attempts.get(n) ?? [], run.killedAt));
      // Their subscribers: every entry the stream holds, once, in order.
      const writer = cluster.cluster();
      const finals = new Map<string, StreamId[]>();
      for (const n of others)
        finals.set(
          n,
          ((await writer.xrange(n, '-', '+')) as Array<[string, string[]]>).map(([id]) => id),
        );
      try {
        await waitFor(() => others.every((n) => (received.get(n)?.length ?? 0) >= (finals.get(n)?.length ?? 0)), {
          timeoutMs: 30_000,
          message: 'the other primaries’ subscribers never got every entry',
        });
      } catch (error) {
        // Fall through: the assertions below name the stream that diverged.
        if (!(error instanceof DeadlineError)) throw error;
      }
      const deliveryGaps = others.map((n) => {
        const at = (received.get(n) ?? []).map((r) => r.at).filter((t) => t >= run.killedAt && t <= run.promotedAt);
        return Math.max(0, ...at.map((t, i) => t - (at[i - 1] ?? run.killedAt)));
      });
      console.info(
        `require-full-coverage no: primary killed, replica promoted after ${(run.promotedAt - run.killedAt).toFixed(0)} ms; ` +
          `other primaries' ${others.length} streams: ${otherOutages.reduce((s, o) => s + o.failed.length, 0)} failed writes, longest time without a write ${Math.max(...otherOutages.map((o) => o.longestMs)).toFixed(0)} ms, ` +
          `longest delivery gap before the promotion ${Math.max(...deliveryGaps).toFixed(0)} ms; ` +
          `victim's ${run.onVictim.size} streams: ${victimOutages.reduce((s, o) => s + o.failed.length, 0)} failed writes, longest ${Math.max(...victimOutages.map((o) => o.longestMs)).toFixed(0)} ms without one`,
      );
      expect(otherOutages.filter((o) => o.failed.length > 0).map((o) => ({ stream: o.stream, first: o.failed[0]?.error }))).toEqual([]);
      expect(victimOutages.every((o) => o.failed.length > 0)).toBe(true);
      for (const n of others) {
        const acked = (run.attempts.get(n) ?? []).flatMap((a) => (a.ok && a.id !== undefined ? [a.id] : []));
        expect(finals.get(n)).toEqual(acked);
        expect((received.get(n) ?? []).map((r) => r.id)).toEqual(acked);
      }
    } finally {
      client.close();
    }
  }, 150_000);
});

describe('the same kill with cluster-require-full-coverage yes (Redis’s default), for contrast', () => {
  let cluster: RedisCluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('refuses writes to every primary’s slots with CLUSTERDOWN until the replica is promoted', async () => {
    cluster = await startRedisCluster({ requireFullCoverage: true });
    const names = await cluster.keysOnEveryPrimary(`${PREFIX}:`, STREAMS);
    const run = await killPrimaryWhilePublishing(cluster, names);
    const others = names.filter((n) => !run.onVictim.has(n));
    const refused = others.flatMap((n) => outage(run.attempts.get(n) ?? [], run.killedAt).failed);
    console.info(
      `require-full-coverage yes: replica promoted after ${(run.promotedAt - run.killedAt).toFixed(0)} ms; ` +
        `${refused.length} writes to the other primaries' ${others.length} streams refused, first: ${refused[0]?.error ?? 'none'}`,
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((a) => a.error?.includes('CLUSTERDOWN') === true)).toBe(true);
  }, 120_000);
});
