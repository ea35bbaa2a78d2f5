import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet, FleetRelay } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import type { Recorder } from './support/recorder.js';
import { startOutagePublisher } from './support/outagePublisher.js';

// Every acknowledged XADD is on disk before its reply (and before any reader sees it), so a
// SIGKILLed Redis comes back from its AOF with exactly the entries anyone was told about.
// A short XREAD block makes a reader's dead-socket timeout (block + 5 s) fit in a test.
const getFleet = useFleet({
  relays: 2,
  redisArgs: ['--appendonly', 'yes', '--appendfsync', 'always'],
  relayEnv: { RELAY_XREAD_BLOCK_MS: '1000' },
});

const STREAMS = 5;
const CLIENTS_PER_RELAY = 10;
const RECONNECTS = 'streamgate_relay_redis_reconnects_total';

interface Audience {
  readonly clients: RelayClient[];
  /** One per subscription: CLIENTS_PER_RELAY × relays × STREAMS. */
  readonly recorders: Array<Recorder & { stream: string }>;
}

/** 100 live subscriptions: every client on every relay reads every stream. */
function subscribeAudience(fleet: Fleet, streams: readonly string[]): Audience {
  const clients: RelayClient[] = [];
  const recorders: Audience['recorders'] = [];
  for (const relay of fleet.relays) {
    for (let i = 0; i < CLIENTS_PER_RELAY; i++) {
      const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
      clients.push(client);
      for (const stream of streams) recorders.push({ ...record(fleet, [relay.url], stream, { client }), stream });
    }
  }
  return { clients, recorders };
}

const readyz = async (relay: FleetRelay): Promise<number> => (await fetch(`${relay.httpUrl}/readyz`)).status;
const allReadyz = async (fleet: Fleet, status: number): Promise<boolean> =>
  (await Promise.all(fleet.relays.map(readyz))).every((s) => s === status);
const reconnects = async (fleet: Fleet, labels?: string): Promise<number[]> =>
  Promise.all(fleet.relays.map(async (r) => metricValue(await r.metrics(), RECONNECTS, labels)));
const connectionErrors = async (fleet: Fleet): Promise<number[]> =>
  Promise.all(
    fleet.relays.map(async (r) => metricValue(await r.metrics(), 'streamgate_relay_redis_errors_total', 'operation="connection"')),
  );

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

/** A subscription started during the outage, resuming after `fromSeq`. */
type LateJoiner = Recorder & { stream: string; fromSeq: number };

/** Runs one outage while 100 subscriptions read STREAMS publishing streams; checks every sequence. */
async function throughOutage(
  name: string,
  outage: (fleet: Fleet, audience: Audience) => Promise<LateJoiner[] | void>,
): Promise<{ totals: number[]; failures: number; late: number }> {
  const fleet = getFleet();
  const streams = Array.from({ length: STREAMS }, (_, i) => `${name}-${i}`);
  const audience = subscribeAudience(fleet, streams);
  cleanup.push(() => audience.clients.forEach((c) => c.close()));
  expect(audience.recorders).toHaveLength(100);
  await waitFor(() => audience.recorders.every((r) => r.sub.state === 'live'), {
    timeoutMs: 30_000,
    message: 'not every subscription went live',
  });

  const publishers = streams.map((s) => startOutagePublisher(fleet.redis.url, s));
  cleanup.push(() => Promise.all(publishers.map((p) => p.stop())));
  await waitFor(() => audience.recorders.every((r) => r.seqs.length >= 50), {
    timeoutMs: 30_000,
    message: 'subscriptions got no events before the outage',
  });

  const late = (await outage(fleet, audience)) ?? [];
  cleanup.push(() => late.forEach((r) => r.close()));

  // Publishing resumed: each stream moves well past where it stood when Redis came back.
  const resumedAt = publishers.map((p) => p.published);
  await waitFor(() => publishers.every((p, i) => p.published >= (resumedAt[i] ?? 0) + 100), {
    timeoutMs: 30_000,
    message: 'publishing never resumed after the outage',
  });
  const totals = await Promise.all(publishers.map((p) => p.stop()));
  const failures = publishers.reduce((n, p) => n + p.failures, 0);
  const totalOf = (stream: string): number => totals[streams.indexOf(stream)] ?? -1;
  await waitFor(() => audience.recorders.every((r) => r.seqs.length >= totalOf(r.stream)), {
    timeoutMs: 30_000,
    message: 'not every subscription caught up after the outage',
  });
  const problems = audience.recorders
    .map((r, i) => ({
      i,
      stream: r.stream,
      problem: gapsAndDuplicates(r.seqs, 0, totalOf(r.stream)),
      state: r.sub.state,
      dupes: r.sub.duplicatesIgnored,
    }))
    .filter((p) => p.problem !== null || p.dupes !== 0);
  expect(problems).toEqual([]);
  await waitFor(() => late.every((r) => r.seqs.length >= totalOf(r.stream) - r.fromSeq - 1), {
    timeoutMs: 30_000,
    message: 'subscriptions resumed during the outage never caught up',
  });
  const lateProblems = late
    .map((r) => ({
      stream: r.stream,
      problem: gapsAndDuplicates(r.seqs, r.fromSeq + 1, totalOf(r.stream)),
      recoveries: r.recoveries,
      dupes: r.sub.duplicatesIgnored,
    }))
    .filter((p) => p.problem !== null || p.dupes !== 0 || p.recoveries.length > 0);
  expect(lateProblems).toEqual([]);
  return { totals, failures, late: late.length };
}

describe('Redis outages', () => {
  it('Redis SIGKILLed and restarted on its port from its AOF: readyz says 503 then 200, 100 subscriptions end with every event once', async () => {
    const fleet = getFleet();
    const before = await reconnects(fleet);
    const { totals, failures, late } = await throughOutage('redis-kill', async (_, audience) => {
      const killed = await fleet.redis.kill('SIGKILL');
      expect(killed?.signal).toBe('SIGKILL');
      await waitFor(() => allReadyz(fleet, 503), { timeoutMs: 10_000, message: 'relays kept reporting ready with Redis dead' });
      // Clients that come back while Redis is down: refused as retryable, they retry until it is back.
      const joiners: LateJoiner[] = [];
      for (const source of audience.recorders.slice(0, 2 * STREAMS)) {
        const fromSeq = 9;
        const from = source.ids[fromSeq];
        if (from === undefined) throw new Error('no id to resume from');
        const relay = fleet.relays[joiners.length % fleet.relays.length];
        if (relay === undefined) throw new Error('no relay');
        joiners.push({ ...record(fleet, [relay.url], source.stream, { from }), stream: source.stream, fromSeq });
      }
      await waitFor(() => joiners.every((j) => j.errors.some((e) => e.code === 'stream_unavailable')), {
        timeoutMs: 10_000,
        message: 'resumes during the outage were not refused as stream_unavailable',
      });
      await fleet.redis.restart();
      await waitFor(() => allReadyz(fleet, 200), { timeoutMs: 20_000, message: 'relays never became ready after Redis came back' });
      return joiners;
    });
    const after = await reconnects(fleet);
    for (const [i, count] of after.entries()) expect(count).toBeGreaterThan(before[i] ?? 0);
    console.log(
      `redis kill: totals per stream ${totals.join(',')}, publish failures reconciled ${failures}, ${late} resumes started during the outage, reconnects ${before.join(',')} -> ${after.join(',')}`,
    );
  });

  it('Redis frozen (SIGSTOP) for seconds then resumed (SIGCONT): relays report it, then relays and clients recover with every event once', async () => {
    const fleet = getFleet();
    const readersBefore = await reconnects(fleet, 'connection="reader"');
    const { totals } = await throughOutage('redis-stop', async () => {
      const service = fleet.redis.service;
      if (service === undefined) throw new Error('redis is not running');
      const errorsBefore = await connectionErrors(fleet);
      expect(service.signal('SIGSTOP')).toBe(true);
      try {
        // A frozen Redis keeps its sockets open: only a probe that times out can see it.
        await waitFor(() => allReadyz(fleet, 503), { timeoutMs: 15_000, message: 'relays kept reporting ready with Redis frozen' });
        // Like a half-open connection, the silent reader socket is given up on and replaced.
        await waitFor(async () => (await connectionErrors(fleet)).every((n, i) => n > (errorsBefore[i] ?? 0)), {
          timeoutMs: 15_000,
          message: 'relays kept waiting on a reader socket that had gone silent',
        });
      } finally {
        service.signal('SIGCONT');
      }
      await waitFor(() => allReadyz(fleet, 200), { timeoutMs: 20_000, message: 'relays never became ready after Redis resumed' });
    });
    const readersAfter = await reconnects(fleet, 'connection="reader"');
    for (const [i, count] of readersAfter.entries()) expect(count).toBeGreaterThan(readersBefore[i] ?? 0);
    console.log(
      `redis stop: totals per stream ${totals.join(',')}, reader reconnects ${readersBefore.join(',')} -> ${readersAfter.join(',')}`,
    );
  });
});
