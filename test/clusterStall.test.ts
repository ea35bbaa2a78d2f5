import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { Subscription } from '@streamgate/client';
import { clusterKeySlot, waitFor, withDeadline } from '@streamgate/testkit';
import type { RedisCluster, RelayProcess } from '@streamgate/testkit';
import { startClusterRelays, waitCount } from './support/clusterRelays.js';
import type { ClusterRelays } from './support/clusterRelays.js';
import { mintToken } from './support/mintToken.js';

const STREAMS = 30;
/** Far below the 10 s a frozen primary held every read round for before the per-node deadline. */
const DELIVERY_BOUND_MS = 2_000;
/**
 * How long the primary stays frozen while the others are written to: several sweeps and retries,
 * and (before the per-primary PING) several PINGs, each sent to a random primary.
 */
const FROZEN_FOR_MS = 8_000;

interface Seen {
  readonly seqs: number[];
  readonly errors: string[];
}

let fleet: ClusterRelays | undefined;
let cluster: RedisCluster;
let relay: RelayProcess;

beforeAll(async () => {
  // A node timeout far beyond the freeze: the stopped primary stays the primary of its slots (no
  // failover), so this is a stall, not the failover clusterFailover.test.ts covers.
  fleet = await startClusterRelays(
    ['relay-stall'],
    {
      // Sweeps read every key, the frozen primary's too, every second: each sweep round reaches it.
      RELAY_NOTIFY_SWEEP_MS: '1000',
      RELAY_REDIS_DOWN_AFTER_MS: '2000',
    },
    { nodeTimeoutMs: 60_000 },
  );
  cluster = fleet.cluster;
  const [first] = fleet.relays;
  if (first === undefined) throw new Error('relay not started');
  relay = first;
}, 90_000);

afterAll(async () => {
  await fleet?.stop();
});

describe('a frozen primary on a Redis Cluster', () => {
  it('leaves the other primaries’ streams live within a bound and the relay ready; its own streams catch up with no gap once it resumes', async () => {
    const names = await cluster.keysOnEveryPrimary('cluster-stall:', STREAMS);
    const [victim] = await cluster.primaries();
    const pid = victim?.service?.pid;
    if (victim === undefined || pid === undefined) throw new Error('no primary to freeze');
    const writer = cluster.cluster();
    await waitFor(() => writer.status === 'ready', { timeoutMs: 10_000, message: 'writer connected to the cluster' });
    const frozen = new Set(names.filter((n) => writer.slots[clusterKeySlot(n)]?.[0] === `127.0.0.1:${victim.port}`));
    const healthy = names.filter((n) => !frozen.has(n));
    expect(frozen.size).toBeGreaterThan(0);
    expect(healthy.length).toBeGreaterThan(0);

    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    const seen = new Map<string, Seen>(names.map((n) => [n, { seqs: [], errors: [] }]));
    /** Per healthy entry written while the primary is frozen: write acknowledged → delivered, ms. */
    const latencies: number[] = [];
    const writtenAt = new Map<string, number>();
    const subs: Array<Subscription<{ seq: number }>> = [];
    for (const stream of names) {
      const token = await mintToken(fleet!.signingKey, { stream, redis: cluster.url });
      const s = seen.get(stream)!;
      subs.push(
        client.subscribe<{ seq: number }>({
          getToken: () => Promise.resolve({ token, stream, expiresAt: Date.now() + 300_000 }),
          onEvent: (data) => {
            s.seqs.push(data.seq);
            const at = writtenAt.get(`${stream}/${data.seq}`);
            if (at !== undefined) latencies.push(Date.now() - at);
          },
          onError: (error) => s.errors.push(error.code),
        }),
      );
    }
    const victimClient = victim.client();
    let stopped = false;
    try {
      await waitCount(() => subs.filter((s) => s.state === 'live').length, STREAMS, 'subscriptions live', 30_000);
      // Seq 0 everywhere: every key's channel is subscribed and read before the freeze.
      await Promise.all(names.map((n) => writer.xadd(n, '*', 'data', JSON.stringify({ seq: 0 }))));
      await waitCount(() => names.filter((n) => seen.get(n)!.seqs.length === 1).length, STREAMS, 'seq 0 delivered', 10_000);

      process.kill(pid, 'SIGSTOP');
      stopped = true;
      const frozenAt = Date.now();
      // Written to the frozen primary: queued on its socket, applied (and notified) once it resumes.
      const victimWrites = [...frozen].map((n) => victimClient.xadd(n, '*', 'data', JSON.stringify({ seq: 1 })));
      const notReady: number[] = [];
      let seq = 1;
      while (Date.now() - frozenAt < FROZEN_FOR_MS) {
        const round = seq;
        await Promise.all(
          healthy.map(async (n) => {
            await writer.xadd(n, '*', 'data', JSON.stringify({ seq: round }));
            writtenAt.set(`${n}/${round}`, Date.now());
          }),
        );
        await waitCount(
          () => healthy.filter((n) => seen.get(n)!.seqs.length === round + 1).length,
          healthy.length,
          `seq ${round} delivered on the healthy primaries while one is frozen`,
          DELIVERY_BOUND_MS + 8_000,
        );
        const ready = await fetch(`${relay.httpUrl}/readyz`);
        if (ready.status !== 200) notReady.push(ready.status);
        seq++;
      }
      const slowest = Math.max(...latencies);
      console.log(`frozen primary: ${latencies.length} healthy entries, slowest ${slowest} ms, readyz not 200: ${notReady.length}`);
      expect(slowest).toBeLessThan(DELIVERY_BOUND_MS);
      expect(notReady).toEqual([]);

      process.kill(pid, 'SIGCONT');
      stopped = false;
      await withDeadline(Promise.all(victimWrites), 10_000, 'writes to the resumed primary acknowledged');
      await waitCount(
        () => [...frozen].filter((n) => seen.get(n)!.seqs.length === 2).length,
        frozen.size,
        'the resumed primary’s streams caught up',
        10_000,
      );
      for (const n of frozen) expect(seen.get(n)!.seqs, n).toEqual([0, 1]);
      for (const n of healthy) expect(seen.get(n)!.seqs, n).toEqual(Array.from({ length: seq }, (_, i) => i));
      for (const [n, s] of seen) expect(s.errors, n).toEqual([]);
      expect(subs.every((s) => s.state === 'live')).toBe(true);
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      victimClient.disconnect();
      writer.disconnect();
      client.close();
    }
  }, 90_000);
});
