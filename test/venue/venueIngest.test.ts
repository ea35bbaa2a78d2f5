import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import type { Redis } from 'ioredis';
import { RelayClient } from '@streamgate/client';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import { spawnIngest, startVenueSim, waitFor } from '@streamgate/testkit';
import type { AppProcess, VenueSim } from '@streamgate/testkit';
import { FAST_WORKER_ENV, holdDemand } from '../support/ingestHarness.js';
import { mintToken } from '../support/mintToken.js';
import { metricValue, useFleet } from '../support/startFleet.js';
import type { Fleet } from '../support/startFleet.js';
import { APP_KEY, symbols } from '../support/venueHarness.js';
import { ingestKeys } from '@streamgate/ingest-core/redis';

/*
 * The venue across processes: a real redis-server, the simulated venue (in this process, over
 * real MQTT and HTTP), ingest worker processes with a venue topology, and a real relay serving
 * the symbol and control streams to a client holding a token.
 */

const getFleet = useFleet({ relays: 1 });
const sims: VenueSim[] = [];
const workers: AppProcess[] = [];

afterAll(async () => {
  await Promise.allSettled(workers.map((w) => w.service.stop()));
  await Promise.allSettled(sims.map((s) => s.close()));
});

/** The venue payload as the contract states it, checked independently of the adapter's own schema. */
const payloadSchema = z.discriminatedUnion('kind', [
  z.looseObject({ symbol: z.string(), kind: z.literal('snapshot'), seq: z.number().int(), ts: z.number().int(), price: z.number() }),
  z.looseObject({
    symbol: z.string(),
    kind: z.literal('quote'),
    seq: z.number().int(),
    ts: z.number().int(),
    bid: z.number(),
    ask: z.number(),
  }),
  z.looseObject({
    symbol: z.string(),
    kind: z.literal('tick'),
    seq: z.number().int(),
    ts: z.number().int(),
    price: z.number(),
    size: z.number(),
  }),
]);
type Payload = z.infer<typeof payloadSchema>;

const coverageNoticeSchema = z.looseObject({
  type: z.literal('coverage'),
  venue: z.string(),
  wanted: z.number(),
  covered: z.number(),
  byKind: z.object({ snapshot: z.number(), quote: z.number(), tick: z.number() }),
});

const venueStatusSchema = z.looseObject({
  wanted: z.number(),
  covered: z.number(),
  coverage: z.array(z.string()),
  coverageByKind: z.object({ snapshot: z.array(z.string()), quote: z.array(z.string()), tick: z.array(z.string()) }),
  shards: z.array(z.looseObject({ index: z.number(), sessionId: z.string(), connected: z.boolean(), symbols: z.number() })),
});
type VenueStatus = z.infer<typeof venueStatusSchema>;

const UNIVERSE = symbols(120);
/** 30 of the 120, spread over the universe. */
const DEMANDED = UNIVERSE.filter((_, i) => i % 4 === 1);
/** 20 per session by configuration (the venue allows 100), so 30 symbols need exactly two sessions. */
const PER_SESSION = 20;
const SESSIONS_NEEDED = Math.ceil(DEMANDED.length / PER_SESSION);

function venueTopology(sim: VenueSim) {
  return {
    venues: {
      sim: {
        mqttUrl: sim.mqttUrl,
        httpUrl: sim.httpUrl,
        appKey: APP_KEY,
        symbols: UNIVERSE,
        maxSymbolsPerSession: PER_SESSION,
        reassertIntervalMs: 500,
        coverageStaleMs: 1_000,
        reconcileTimeoutMs: 2_000,
        callTimeoutMs: 3_000,
        connectTimeoutMs: 2_000,
        rateLimit: { perSecond: 50, burst: 20 },
      },
    },
  };
}

const streamOf = (symbol: string) => `md.sim.${symbol}`;
const CONTROL = 'md.sim._control';

async function startSim(): Promise<VenueSim> {
  const sim = await startVenueSim({ publishIntervalMs: 100 });
  sims.push(sim);
  return sim;
}

async function startWorker(fleet: Fleet, name: string, sim: VenueSim): Promise<AppProcess> {
  const worker = await spawnIngest({ name, redisUrl: fleet.redis.url, topology: venueTopology(sim), env: FAST_WORKER_ENV });
  workers.push(worker);
  return worker;
}

/** The worker's coverage query; undefined while it does not serve the venue (404). */
async function venueStatus(worker: AppProcess): Promise<VenueStatus | undefined> {
  const res = await fetch(`${worker.httpUrl}/venues/sim`);
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (res.status !== 200) throw new Error(`/venues/sim answered ${res.status}`);
  return venueStatusSchema.parse(await res.json());
}

async function readPayloads(redis: Redis, stream: string): Promise<{ id: string; payload: Payload }[]> {
  const entries = await redis.xrange(stream, '-', '+');
  return entries.map(([id, fields]) => {
    const data = fields[fields.indexOf('data') + 1];
    if (data === undefined) throw new Error(`${stream} ${id} has no data field`);
    return { id, payload: payloadSchema.parse(JSON.parse(data)) };
  });
}

/** For each kind, the seqs in stream order must strictly increase: no repeat, nothing out of order. */
function seqViolations(stream: string, symbol: string, entries: readonly { id: string; payload: Payload }[]): string[] {
  const problems: string[] = [];
  const last = new Map<string, number>();
  for (const { id, payload } of entries) {
    if (payload.symbol !== symbol) problems.push(`${stream} ${id}: payload for ${payload.symbol}`);
    const before = last.get(payload.kind);
    if (before !== undefined && payload.seq <= before) problems.push(`${stream} ${id}: ${payload.kind} seq ${payload.seq} after ${before}`);
    last.set(payload.kind, payload.seq);
  }
  return problems;
}

async function lengths(redis: Redis, streams: readonly string[]): Promise<Map<string, number>> {
  const pipeline = redis.pipeline();
  for (const s of streams) pipeline.xlen(s);
  const replies = (await pipeline.exec()) ?? [];
  return new Map(streams.map((s, i) => [s, Number(replies[i]?.[1] ?? 0)]));
}

async function deleteKeys(redis: Redis, patterns: readonly string[]): Promise<void> {
  for (const match of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1_000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** Samples the venue's registered sessions until stopped: the most ever seen at once, and every id. */
function watchSessions(sim: VenueSim): { max(): number; ids: Set<string>; stop(): void } {
  let max = 0;
  const ids = new Set<string>();
  const sample = () => {
    const sessions = sim.sessions();
    max = Math.max(max, sessions.length);
    for (const s of sessions) ids.add(s.id);
  };
  // The sim lives in this process, so sampling is a synchronous read of its registry.
  const timer = setInterval(sample, 10);
  sample();
  return { max: () => max, ids, stop: () => clearInterval(timer) };
}

describe('the venue through ingest worker processes and a relay', () => {
  it('demand for 30 of 120 symbols opens two sessions for exactly those, fills their streams in seq order, and serves them and the control stream through the relay', async () => {
    const fleet = getFleet();
    const redis = fleet.redis.client();
    const sim = await startSim();
    const watch = watchSessions(sim);
    try {
      const worker = await startWorker(fleet, 'venue-one', sim);
      await using _demand = holdDemand(redis, DEMANDED.map(streamOf));

      let status: VenueStatus | undefined;
      await waitFor(
        async () => {
          status = await venueStatus(worker);
          return status?.coverage.length === DEMANDED.length;
        },
        { timeoutMs: 30_000, message: 'the worker reports every demanded symbol covered' },
      );
      expect(status?.coverage).toEqual([...DEMANDED].sort());
      for (const kind of ['snapshot', 'quote', 'tick'] as const) expect(status?.coverageByKind[kind]).toEqual([...DEMANDED].sort());
      expect(status?.wanted).toBe(DEMANDED.length);

      // At the venue: two sessions under our key, holding exactly the demanded symbols between them.
      const sessions = sim.sessions();
      expect(sessions.length).toBe(SESSIONS_NEEDED);
      expect(sessions.every((s) => s.appKey === APP_KEY)).toBe(true);
      expect(new Set(sessions.map((s) => s.id))).toEqual(new Set(status?.shards.map((sh) => sh.sessionId)));
      const atVenue = sessions.flatMap((s) => s.subscribed.map((x) => x.symbol));
      expect(atVenue.sort()).toEqual([...DEMANDED].sort());
      for (const s of sessions) expect(s.subscribed.length).toBeLessThanOrEqual(PER_SESSION);
      expect(sim.calls().every((c) => c.symbols.every((s) => DEMANDED.includes(s)))).toBe(true);

      // Every demanded stream gets entries; the other 90 symbols' streams stay empty.
      const demandedStreams = DEMANDED.map(streamOf);
      await waitFor(async () => [...(await lengths(redis, demandedStreams)).values()].every((n) => n >= 6), {
        timeoutMs: 15_000,
        message: 'every demanded symbol stream has entries of each kind',
      });
      const others = await lengths(redis, UNIVERSE.filter((s) => !DEMANDED.includes(s)).map(streamOf));
      expect([...others.values()].every((n) => n === 0)).toBe(true);
      for (const symbol of DEMANDED) {
        const entries = await readPayloads(redis, streamOf(symbol));
        expect(new Set(entries.map((e) => e.payload.kind))).toEqual(new Set(['snapshot', 'quote', 'tick']));
        expect(seqViolations(streamOf(symbol), symbol, entries)).toEqual([]);
      }

      // The control stream gets a coverage notice that reaches every demanded symbol (notices are
      // written at re-assert ticks, so it may trail the query by one tick).
      const coverageNotices = async () => {
        const control = await redis.xrange(CONTROL, '-', '+');
        const notices = control.map(([, fields]) => JSON.parse(fields[fields.indexOf('data') + 1] ?? 'null') as unknown);
        return notices
          .map((n) => coverageNoticeSchema.safeParse(n))
          .filter((p) => p.success)
          .map((p) => p.data);
      };
      await waitFor(
        async () =>
          (await coverageNotices()).some((n) => n.venue === 'sim' && n.wanted === DEMANDED.length && n.covered === DEMANDED.length),
        {
          timeoutMs: 5_000,
          message: `a coverage notice with ${DEMANDED.length} of ${DEMANDED.length} covered on ${CONTROL}`,
        },
      );

      // Through the relay with a token: one symbol stream live, and the control stream from its start.
      const relay = fleet.relays[0];
      if (relay === undefined) throw new Error('no relay');
      const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
      try {
        const symbol = DEMANDED[3] ?? 'S013';
        const tokenFor = async (stream: string) => ({
          token: await mintToken(fleet.signingKey, { stream, redis: fleet.redis.url, sub: 'venue-viewer' }),
          stream,
          expiresAt: Date.now() + 300_000,
        });
        const received: unknown[] = [];
        const errors: unknown[] = [];
        client.subscribe({
          getToken: () => tokenFor(streamOf(symbol)),
          onEvent: (data) => received.push(data),
          onError: (e) => errors.push(e),
        });
        const controlSeen: unknown[] = [];
        client.subscribe({
          getToken: () => tokenFor(CONTROL),
          from: '0-0',
          onEvent: (data) => controlSeen.push(data),
          onError: (e) => errors.push(e),
        });
        await waitFor(() => received.length >= 10, { timeoutMs: 15_000, message: `the relay delivers ${streamOf(symbol)} entries` });
        const relayed = received.map((d) => payloadSchema.parse(d));
        expect(relayed.every((p) => p.symbol === symbol)).toBe(true);
        expect(
          seqViolations(
            'relay',
            symbol,
            relayed.map((payload, i) => ({ id: String(i), payload })),
          ),
        ).toEqual([]);
        await waitFor(() => controlSeen.some((n) => coverageNoticeSchema.safeParse(n).success), {
          timeoutMs: 15_000,
          message: 'the relay serves the control stream with its coverage notice',
        });
        expect(errors).toEqual([]);
      } finally {
        client.close();
      }

      // The coverage gauge, read at scrape time (so a scrape during a stall may briefly show less).
      let metrics = '';
      await waitFor(
        async () => {
          metrics = await (await fetch(`${worker.httpUrl}/metrics`)).text();
          return metricValue(metrics, 'ingest_venue_coverage', 'kind="any"') === DEMANDED.length;
        },
        { timeoutMs: 5_000, message: 'ingest_venue_coverage{kind="any"} reaches every demanded symbol' },
      );
      for (const kind of ['snapshot', 'quote', 'tick'])
        expect(metricValue(metrics, 'ingest_venue_coverage', `kind="${kind}"`)).toBe(DEMANDED.length);
      expect(metricValue(metrics, 'ingest_venue_wanted')).toBe(DEMANDED.length);

      expect(watch.max()).toBe(SESSIONS_NEEDED);
      // SIGTERM: the worker closes its venue sessions and gives the venue lease back before exiting.
      expect((await worker.service.stop()).code).toBe(0);
      await waitFor(() => sim.sessions().length === 0, { timeoutMs: 5_000, message: 'the stopped worker closed its venue sessions' });
      expect(await redis.exists(ingestKeys('sg:ingest:', CONTROL).lease)).toBe(0);
    } finally {
      watch.stop();
    }
  });

  it('of two workers only one holds the venue; SIGKILLed, the other takes over within a few lease TTLs with no duplicate (kind, seq)', async () => {
    const fleet = getFleet();
    const redis = fleet.redis.client();
    // A fresh venue restarts its seqs: the first test's streams and dedupe keys go, and so does
    // its demand, which would otherwise live on for its TTL and start the first worker early.
    await deleteKeys(redis, ['md.sim.*', 'sg:ingest:*', INGEST_DEMAND_KEY]);
    const sim = await startSim();
    const watch = watchSessions(sim);
    try {
      const a = await startWorker(fleet, 'venue-a', sim);
      const b = await startWorker(fleet, 'venue-b', sim);
      await using _demand = holdDemand(redis, DEMANDED.map(streamOf));

      let bothServed = false;
      let roles: { holder: AppProcess; other: AppProcess; status: VenueStatus } | undefined;
      await waitFor(
        async () => {
          const [sa, sb] = await Promise.all([venueStatus(a), venueStatus(b)]);
          if (sa !== undefined && sb !== undefined) bothServed = true;
          if (sa?.coverage.length === DEMANDED.length) roles = { holder: a, other: b, status: sa };
          if (sb?.coverage.length === DEMANDED.length) roles = { holder: b, other: a, status: sb };
          return roles !== undefined;
        },
        { timeoutMs: 30_000, message: 'one worker covers every demanded symbol' },
      );
      if (roles === undefined) throw new Error('unreachable: waitFor resolved without a holder');
      const { holder, other, status: before } = roles;
      expect(bothServed).toBe(false);
      // The venue's sessions are the holder's, and only as many as one worker needs.
      expect(new Set(sim.sessions().map((s) => s.id))).toEqual(new Set(before.shards.map((sh) => sh.sessionId)));
      expect(await venueStatus(other)).toBeUndefined();

      const demandedStreams = DEMANDED.map(streamOf);
      await waitFor(async () => [...(await lengths(redis, demandedStreams)).values()].every((n) => n >= 6), {
        timeoutMs: 15_000,
        message: 'every demanded stream has entries before the kill',
      });

      holder.service.signal('SIGKILL');
      await holder.service.exited;
      const killedAt = Date.now();
      const atKill = await lengths(redis, demandedStreams);

      // Lease TTL 1.5 s: the venue lease and the symbol leases expire, the other worker takes them.
      let after: VenueStatus | undefined;
      await waitFor(
        async () => {
          after = await venueStatus(other);
          return after?.coverage.length === DEMANDED.length;
        },
        {
          timeoutMs: 4 * Number(FAST_WORKER_ENV.INGEST_LEASE_TTL_MS) + 5_000,
          message: 'the surviving worker covers every demanded symbol',
        },
      );
      const takeoverMs = Date.now() - killedAt;
      expect(new Set(sim.sessions().map((s) => s.id))).toEqual(new Set(after?.shards.map((sh) => sh.sessionId)));
      await waitFor(
        async () => {
          const now = await lengths(redis, demandedStreams);
          return demandedStreams.every((s) => (now.get(s) ?? 0) >= (atKill.get(s) ?? 0) + 6);
        },
        { timeoutMs: 15_000, message: 'new entries on every demanded stream after the take-over' },
      );

      for (const symbol of DEMANDED) {
        const entries = await readPayloads(redis, streamOf(symbol));
        expect(seqViolations(streamOf(symbol), symbol, entries)).toEqual([]);
      }
      expect(watch.max()).toBe(SESSIONS_NEEDED);
      // The take-over opened fresh sessions; the killed worker's are gone from the venue.
      expect([...watch.ids].sort()).toEqual([...before.shards, ...(after?.shards ?? [])].map((sh) => sh.sessionId).sort());
      console.info(`venue take-over after SIGKILL: ${takeoverMs} ms`);
    } finally {
      watch.stop();
    }
  });
});
