import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { OPS_SNAPSHOT_MAX_BYTES, OPS_STREAM_DEFAULT, opsSnapshotSchema } from '@streamgate/ops';
import type { IngestChainStream, IngestSnapshot } from '@streamgate/ops';
import { freePort, spawnIngest, startAnvil, startFaultProxy, startRedis, startVenueSim, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, RedisServer, VenueSim } from '@streamgate/testkit';
import { FAST_WORKER_ENV, holdDemand, testChain } from './support/ingestHarness.js';
import { APP_KEY, symbols } from './support/venueHarness.js';

/*
 * The ingest worker's operations snapshots across processes: a worker process following a real
 * anvil through two fault proxies (providers p0 and p1) and the simulated venue over real MQTT
 * and HTTP, publishing into its own ops Redis (another redis-server than the one it writes
 * streams to), read back here the way the relay would read the stream.
 */

let redis: RedisServer;
let opsRedis: RedisServer;
let anvil: AnvilNode;
let primary: FaultProxy;
let secondary: FaultProxy;
let sim: VenueSim;
let worker: AppProcess;
let client: Redis;
let ops: Redis;
const workers: AppProcess[] = [];

const STREAM = 'evm:anvil:heads';
const SYMBOLS = symbols(6);
/** Four per session by configuration, so six symbols need two sessions. */
const PER_SESSION = 4;

function topology() {
  return {
    // Calls may take the 2 s the failover test delays p1's HTTP by.
    chains: { anvil: testChain([primary, secondary], { requestTimeoutMs: 3_000 }) },
    streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }],
    venues: {
      sim: {
        mqttUrl: sim.mqttUrl,
        httpUrl: sim.httpUrl,
        appKey: APP_KEY,
        symbols: SYMBOLS,
        maxSymbolsPerSession: PER_SESSION,
        reassertIntervalMs: 500,
        coverageStaleMs: 1_000,
        reconcileTimeoutMs: 2_000,
        callTimeoutMs: 3_000,
        connectTimeoutMs: 2_000,
      },
    },
  };
}

beforeAll(async () => {
  redis = await startRedis();
  opsRedis = await startRedis();
  anvil = await startAnvil();
  primary = await startFaultProxy(anvil);
  secondary = await startFaultProxy(anvil);
  sim = await startVenueSim({ publishIntervalMs: 100 });
  client = redis.client();
  ops = opsRedis.client();
  worker = await spawnIngest({
    name: 'ingest-ops',
    redisUrl: redis.url,
    topology: topology(),
    env: { ...FAST_WORKER_ENV, INGEST_OPS_REDIS_URL: opsRedis.url },
  });
  workers.push(worker);
});

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.service.stop()));
  await sim?.close();
  await primary?.close();
  await secondary?.close();
  await anvil?.stop();
  await opsRedis?.stop();
  await redis?.stop();
});

interface Read {
  readonly id: string;
  readonly bytes: number;
  readonly snapshot: IngestSnapshot;
}

/** Every snapshot in the ops stream, each checked against the schema the dashboard reads with. */
async function readSnapshots(): Promise<Read[]> {
  const entries = await ops.xrange(OPS_STREAM_DEFAULT, '-', '+');
  return entries.map(([id, fields]) => {
    expect(fields, `entry ${id} has one data field`).toHaveLength(2);
    expect(fields[0]).toBe('data');
    const json = fields[1] ?? '';
    const snapshot = opsSnapshotSchema.parse(JSON.parse(json));
    if (snapshot.kind !== 'ingest') throw new Error(`entry ${id} is a ${snapshot.kind} snapshot`);
    return { id, bytes: Buffer.byteLength(json), snapshot };
  });
}

async function latest(): Promise<IngestSnapshot | undefined> {
  return (await readSnapshots()).at(-1)?.snapshot;
}

async function chainNow(): Promise<IngestChainStream | undefined> {
  return (await latest())?.chains.find((c) => c.stream === STREAM);
}

/** Waits until `condition` holds, naming what was last seen if it never does. */
async function until<T>(read: () => Promise<T>, condition: (value: T) => boolean, message: string, timeoutMs = 20_000): Promise<T> {
  let last: T | undefined;
  let met = false;
  try {
    await waitFor(
      async () => {
        last = await read();
        met = condition(last);
        return met;
      },
      { timeoutMs, intervalMs: 200, message },
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last seen ${JSON.stringify(last)}`, { cause: error });
  }
  if (!met || last === undefined) throw new Error(message);
  return last;
}

/** Waits for a snapshot whose chain stream satisfies `test`, and answers that stream. */
async function chainUntil(test: (c: IngestChainStream) => boolean, message: string): Promise<IngestChainStream> {
  const chain = await until(chainNow, (c) => c !== undefined && test(c), message);
  if (chain === undefined) throw new Error(message);
  return chain;
}

describe('ingest operations snapshots across processes', () => {
  it('publishes one schema-valid, bounded snapshot a second, named by the worker id', async () => {
    await waitFor(async () => (await readSnapshots()).length >= 6, { timeoutMs: 20_000, message: 'six snapshots' });
    const reads = await readSnapshots();
    const seqs = reads.map((r) => r.snapshot.seq);
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] ?? 0) + i));
    const ats = reads.map((r) => r.snapshot.at);
    const gaps = ats.slice(1).map((at, i) => at - (ats[i] ?? 0));
    const sorted = [...gaps].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    expect(median, `intervals ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(900);
    expect(median, `intervals ${gaps.join(', ')} ms`).toBeLessThanOrEqual(1_150);
    for (const gap of gaps) expect(gap, `intervals ${gaps.join(', ')} ms`).toBeGreaterThan(400);
    for (const { snapshot, bytes } of reads) {
      expect(snapshot).toMatchObject({ kind: 'ingest', v: 1, pod: 'ingest-ops', truncated: false });
      expect(snapshot.startedAt).toBeLessThanOrEqual(snapshot.at);
      expect(bytes).toBeLessThanOrEqual(OPS_SNAPSHOT_MAX_BYTES);
    }
    // Nothing demanded yet: no lease, no stream, no venue session.
    expect(reads[0]?.snapshot).toMatchObject({ leasesHeld: 0, chains: [], venues: [] });
  });

  it('shows the chain stream active on p0 with head and last written block, then the failover to p1 after p0 is cut', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    await chainUntil((c) => c.state === 'active' && c.provider === 'p0', 'the stream active on p0');
    let head = 0;
    for (let i = 0; i < 3; i++) head = await anvil.mine(1);
    const caughtUp = await chainUntil((c) => c.lastWritten === head, `last written block ${head}`);
    expect(caughtUp).toMatchObject({ chain: 'anvil', state: 'active', provider: 'p0', head, failovers: 0, gaps: 0, reorgs: 0 });

    // p1's HTTP answers 2 s late: the backfill before the switch and the head read after the
    // subscription each take that long, so snapshots a second apart see both in-between states.
    secondary.setMode('lag', { lagMs: 2_000, only: 'http' });
    const cutAt = (await readSnapshots()).length;
    primary.setMode('down');
    for (let i = 0; i < 2; i++) head = await anvil.mine(1);
    await chainUntil((c) => c.state === 'active' && c.provider === 'p1', 'the stream active on p1');
    secondary.setMode('pass', { only: 'http' });
    const after = await chainUntil((c) => c.failovers >= 1 && c.lastWritten === head, `failed over and caught up to ${head}`);
    expect(after).toMatchObject({ state: 'active', provider: 'p1', failovers: 1, gaps: 0 });
    expect(after.head).toBeGreaterThanOrEqual(head);
    expect(secondary.subscribeCalls.get('newHeads')).toBe(1);

    const since = (await readSnapshots()).slice(cutAt).flatMap((r) => r.snapshot.chains.filter((c) => c.stream === STREAM));
    const states = since.map((c) => `${c.state}:${c.provider ?? '-'}`);
    // Each state once, in order (a repeat collapsed): p0 until the cut is seen, then the failover.
    const path = states.filter((state, i) => state !== states[i - 1]);
    expect(
      path.filter((state) => state !== 'active:p0'),
      states.join(' → '),
    ).toEqual(['backfilling:-', 'switching:-', 'active:p1']);
    primary.setMode('pass');
  });

  it('counts a reorg the stream wrote', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    const before = await chainUntil((c) => c.state === 'active', 'the stream active');
    await anvil.rpc('anvil_reorg', [2, []]);
    const head = await anvil.mine(1);
    const after = await chainUntil((c) => c.reorgs > before.reorgs && c.lastWritten === head, `a reorg counted, caught up to ${head}`);
    expect(after.gaps).toBe(0);
  });

  it('shows the venue sessions, the symbols on each and coverage by kind, and the leases held', async () => {
    await using _demand = holdDemand(client, [STREAM, ...SYMBOLS.map((s) => `md.sim.${s}`)]);
    const snapshot = await until(
      latest,
      (latestSnapshot) => {
        const venue = latestSnapshot?.venues.find((v) => v.venue === 'sim');
        return venue?.coverage.any === SYMBOLS.length && venue.sessions.reduce((n, s) => n + s.symbols, 0) === SYMBOLS.length;
      },
      'every symbol covered and subscribed',
      30_000,
    );
    const venue = snapshot?.venues.find((v) => v.venue === 'sim');
    expect(venue?.wanted).toBe(SYMBOLS.length);
    expect(venue?.coverage).toEqual({ snapshot: SYMBOLS.length, quote: SYMBOLS.length, tick: SYMBOLS.length, any: SYMBOLS.length });
    expect(venue?.sessions).toHaveLength(Math.ceil(SYMBOLS.length / PER_SESSION));
    expect(venue?.sessions.every((s) => s.connected)).toBe(true);
    // The ids are the venue's: the sessions it has registered under our app key.
    expect(new Set(venue?.sessions.map((s) => s.id))).toEqual(new Set(sim.sessions().map((s) => s.id)));
    // One lease per symbol stream, the chain stream's, and the venue's own (its control stream's).
    expect(snapshot?.leasesHeld).toBe(SYMBOLS.length + 2);
  });

  it('a worker whose ops Redis is unreachable counts the failures and keeps serving', async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}/0`;
    const lonely = await spawnIngest({
      name: 'ingest-ops-nowhere',
      redisUrl: redis.url,
      topology: {
        chains: { anvil: testChain([primary, secondary]) },
        streams: [{ stream: 'evm:anvil:idle', chain: 'anvil', kind: 'newHeads' }],
      },
      env: { ...FAST_WORKER_ENV, INGEST_OPS_REDIS_URL: nowhere },
    });
    workers.push(lonely);
    const failures = async () => {
      const text = await (await fetch(`${lonely.httpUrl}/metrics`)).text();
      return Number(/ingest_ops_publish_failures_total\{code="sink_failed"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    await waitFor(async () => (await failures()) >= 3, { timeoutMs: 15_000, message: 'three failed snapshots counted' });
    expect(lonely.service.exitStatus).toBeUndefined();
    expect((await fetch(`${lonely.httpUrl}/healthz`)).status).toBe(200);
    // Logged once for the run of failures, not once a second.
    expect(lonely.service.output().match(/ops snapshot not published/g)).toHaveLength(1);
  });
});
