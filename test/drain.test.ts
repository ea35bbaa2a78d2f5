import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '@streamgate/client';
import type { WebSocketConstructor } from '@streamgate/client';
import { CloseCode, parseServerFrame } from '@streamgate/protocol';
import { demoStream } from '@streamgate/auth';
import { createPublisher } from '@streamgate/server';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { ksUniform } from './support/ksUniform.js';
import { openRawSocket } from './support/rawSocket.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import type { Recorder } from './support/recorder.js';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet, FleetRelay } from './support/startFleet.js';

// All 2,000 clients must first land on A, in one burst: lift the per-second admission limit.
const getFleet = useFleet({ relays: 1, relayEnv: { RELAY_MAX_CONNECTIONS_PER_SECOND: '100000' } });

/** What one client saw of the drain, in performance.now() time. */
interface DrainTrace {
  noticeAt: number | null;
  /** The relay's own stamp on the notice: ms from the start of its drain. */
  sinceDrainMs: number | null;
  /** When the notice was due on the relay's schedule, on the same clock: the delay it drew. */
  dueMs: number | null;
  /** When a 0-ms timer set as the notice arrived fired: the client's own immediate reconnect is due then too. */
  zeroTimerAt: number | null;
  /** When it opened its next socket after the notice: its reconnect. */
  reconnectingAt: number | null;
  reconnectedTo: string | null;
  /** When that socket's handshake completed (also paced by the other relay and this machine's load). */
  reconnectedAt: number | null;
}

/** `ws` with a tap on the frames and opens, so the test sees when each client was sent away. */
function tappedWebSocket(trace: DrainTrace): WebSocketConstructor {
  return class TappedWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      if (trace.noticeAt !== null && trace.reconnectingAt === null) {
        trace.reconnectingAt = performance.now();
        trace.reconnectedTo = url;
      }
      this.addEventListener('message', (event) => {
        if (trace.noticeAt === null && typeof event.data === 'string' && event.data.startsWith('{"op":"reconnect"')) {
          trace.noticeAt = performance.now();
          // Set before the client handles the notice (this listener runs first), so it fires just
          // before the client's own 0-ms reconnect timer, however late this busy loop runs timers.
          setTimeout(() => (trace.zeroTimerAt = performance.now()), 0);
          const parsed = parseServerFrame(event.data);
          if (parsed.ok && parsed.frame.op === 'reconnect') {
            trace.sinceDrainMs = parsed.frame.sinceDrainMs ?? null;
            trace.dueMs = parsed.frame.dueMs ?? null;
          }
        }
      });
      this.addEventListener('open', () => {
        if (trace.reconnectingAt !== null && trace.reconnectedAt === null) trace.reconnectedAt = performance.now();
      });
    }
  };
}

interface Publishing {
  readonly counts: number[];
  stop(): Promise<void>;
}

/** Publishes seq 0, 1, 2, … on every stream each `everyMs`, until stopped. */
function keepPublishing(fleet: Fleet, streams: readonly string[], everyMs: number): Publishing {
  const redis = fleet.redis.client();
  const publisher = createPublisher({ redis, maxLen: 100_000 });
  const counts = streams.map(() => 0);
  let stopped = false;
  let failure: Error | null = null;
  const loop = (async () => {
    while (!stopped) {
      const tick = performance.now();
      const results = await Promise.all(
        streams.map((stream, i) => {
          const seq = counts[i] ?? 0;
          counts[i] = seq + 1;
          return publisher.publish(demoStream.for(stream), { seq, text: `event ${seq}`, at: new Date().toISOString() });
        }),
      );
      for (const r of results) if (!r.ok) failure = new Error(`publish failed: ${r.error.code}: ${r.error.message}`);
      if (failure !== null) return;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (performance.now() - tick))));
    }
  })();
  return {
    counts,
    stop: async () => {
      stopped = true;
      await loop;
      if (failure !== null) throw failure;
    },
  };
}

/** min/p1/p10/p50/p90/p99/max, for the log line. */
function quantiles(xs: readonly number[]): string {
  const sorted = [...xs].sort((x, y) => x - y);
  return [0, 0.01, 0.1, 0.5, 0.9, 0.99, 1]
    .map((p) => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN).toFixed(0))
    .join('/');
}

async function authTokenRequests(fleet: Fleet): Promise<number> {
  const text = await (await fetch(`${fleet.authUrl}/metrics`)).text();
  return metricValue(text, 'streamgate_auth_token_requests_total');
}

async function readyStatus(relay: FleetRelay): Promise<number> {
  return (await fetch(`${relay.httpUrl}/readyz`)).status;
}

interface Drained {
  readonly recorder: Recorder;
  readonly trace: DrainTrace;
  readonly streamIndex: number;
}

/** `n` clients over `streams`, each with its own socket, listing `urls` in order; all live. */
async function connectClients(fleet: Fleet, urls: readonly string[], streams: readonly string[], n: number): Promise<Drained[]> {
  const clients: Drained[] = [];
  for (let i = 0; i < n; i++) {
    const trace: DrainTrace = {
      noticeAt: null,
      sinceDrainMs: null,
      dueMs: null,
      zeroTimerAt: null,
      reconnectingAt: null,
      reconnectedTo: null,
      reconnectedAt: null,
    };
    const streamIndex = i % streams.length;
    // A long backoff: only an immediate reconnect after a notice or a 4002 is fast.
    const client = new RelayClient({ urls, WebSocket: tappedWebSocket(trace), backoff: { baseMs: 10_000, maxMs: 10_000 } });
    const recorder = record(fleet, urls, streams[streamIndex] ?? '', { user: `user-${i}`, client });
    clients.push({ recorder, trace, streamIndex });
  }
  // Setup, not the drain: 2,000 tokens and subscribes take seconds here, a minute on a machine
  // shared with other heavy jobs.
  try {
    await waitFor(() => clients.every((c) => c.recorder.sub.state === 'live'), {
      timeoutMs: 60_000,
      message: 'not every client went live',
    });
  } catch (error) {
    throw new Error(`${String(error)} (${clients.filter((c) => c.recorder.sub.state === 'live').length}/${n} live)`, { cause: error });
  }
  return clients;
}

describe('relay drain on SIGTERM', () => {
  it('2,000 clients leave a draining relay uniformly over the window, all resume on the other relay with nothing lost or repeated, no auth call is made, and the relay exits by itself', async () => {
    const fleet = getFleet();
    const WINDOW_MS = 20_000;
    const DEADLINE_MS = 40_000;
    const CLIENTS = 2_000;
    const b = fleet.relays[0];
    if (b === undefined) throw new Error('relay B missing');
    const a = await fleet.startRelay({ RELAY_DRAIN_WINDOW_MS: String(WINDOW_MS), RELAY_DRAIN_DEADLINE_MS: String(DEADLINE_MS) });
    const streams = Array.from({ length: 20 }, (_, i) => `drain-${i}`);

    const connectStart = performance.now();
    const clients = await connectClients(fleet, [a.url, b.url], streams, CLIENTS);
    const connectMs = performance.now() - connectStart;
    try {
      expect(metricValue(await a.metrics(), 'streamgate_relay_connections')).toBe(CLIENTS);
      const publishing = keepPublishing(fleet, streams, 500);
      await waitFor(() => clients.every((c) => c.recorder.seqs.length > 0), {
        timeoutMs: 30_000,
        message: 'events never reached every client',
      });
      // Tokens live AUTH_TOKEN_TTL_SECONDS (300 s by default): past the 20-s drain plus the client's
      // 30-s renewal margin, so every client resumes with the token it holds.
      const authBefore = await authTokenRequests(fleet);
      expect(authBefore).toBeGreaterThanOrEqual(CLIENTS);

      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const sigtermAt = performance.now();
      expect(a.service.signal('SIGTERM')).toBe(true);
      const exited = a.service.exited.then((status) => ({ status, at: performance.now() }));

      // Readiness fails at once; a newcomer is sent to another pod with 4002.
      // The relay fails readiness in the tick it starts draining (isReady reads the drainer); the
      // deadline bounds this process's HTTP round trips, which took over 2 s at load 20.
      await waitFor(async () => (await readyStatus(a)) === 503, { timeoutMs: 10_000, message: '/readyz still 200 while draining' });
      const newcomer = await openRawSocket(a.url);
      const refused = await withDeadline(newcomer.closed, 5_000, 'a new connection to the draining relay was not closed');
      expect(refused.code).toBe(CloseCode.tryAnotherPod);
      expect(newcomer.frames).toEqual([]);

      await waitFor(() => clients.every((c) => c.trace.reconnectedAt !== null), {
        timeoutMs: WINDOW_MS + 15_000,
        message: () => `not every client reconnected (${clients.filter((c) => c.trace.reconnectedAt !== null).length}/${CLIENTS})`,
      });
      const end = await withDeadline(exited, DEADLINE_MS, 'relay A did not exit by itself');
      expect(end.status.code).toBe(0);
      expect(end.at - sigtermAt).toBeLessThan(DEADLINE_MS);
      // It exited because its last client left, within the window, not at the deadline.
      expect(end.at - sigtermAt).toBeLessThan(WINDOW_MS + 5_000);
      const over = a.service.lines.find((l) => l.includes('"msg":"drain over"'));
      expect(over).toContain('"outcome":"drained"');
      const late = (JSON.parse(over ?? '{}') as { late?: { notices: number; maxMs: number } }).late;

      // The drain's jitter, uniform over [0, window): Kolmogorov–Smirnov at α = 0.01, on the relay's
      // own stamps, where the schedule is drawn and where it is obeyed. Each notice carries the delay
      // the relay drew for it (dueMs) and when it went out (sinceDrainMs), both ms from the start of
      // its drain. The drawn delays must pass the KS. So must the clients' reconnects on that clock:
      // each notice's due time plus the client's own reaction, from a 0-ms timer set as the notice
      // arrived to the socket it opened; a client that backed off, waited, or left on anything but
      // its own notice moves off its slot and fails. Left out are only delays measured on the way,
      // each checked on its own: the relay's timer lateness (sinceDrainMs − dueMs, which must be
      // ≥ 0 and is what the relay logs as `late`), the notice's way here and this process's event-loop
      // lateness (the 0-ms timer's). Timers on this shared 2-core machine are not precise: at load
      // 15–25 the relay's stalled up to 0.7 s (a KS D of 0.035 on its send stamps against 0.036
      // critical) and this process's by seconds (D 0.2–0.4 on receipt times); those D are logged.
      loopDelay.disable();
      const sent = clients.map((c) => c.trace.sinceDrainMs ?? Number.NaN);
      const due = clients.map((c) => c.trace.dueMs ?? Number.NaN);
      const relayLate = sent.map((t, i) => t - (due[i] ?? Number.NaN));
      const since = (t: number | null): number => (t ?? Number.NaN) - sigtermAt;
      const reconnectsSeen = clients.map((c) => since(c.trace.reconnectingAt));
      const lags = clients.map((c) => (c.trace.reconnectingAt ?? Number.NaN) - (c.trace.noticeAt ?? Number.NaN));
      const reactions = clients.map((c) => (c.trace.reconnectingAt ?? Number.NaN) - (c.trace.zeroTimerAt ?? Number.NaN));
      const reconnects = due.map((t, i) => t + (reactions[i] ?? Number.NaN));
      const receipt = clients.map((c, i) => since(c.trace.noticeAt) - (sent[i] ?? Number.NaN));
      const ks = {
        due: ksUniform(due, 0, WINDOW_MS),
        reconnects: ksUniform(reconnects, 0, WINDOW_MS),
        sent: ksUniform(sent, 0, WINDOW_MS),
        seen: ksUniform(reconnectsSeen, 0, WINDOW_MS),
      };
      console.info(
        `drain of ${CLIENTS} clients over ${WINDOW_MS} ms: KS D notices due=${ks.due.d.toFixed(4)} reconnects=${ks.reconnects.d.toFixed(4)} ` +
          `(critical at α=0.01: ${ks.due.critical.toFixed(4)}; not judged: notices sent ${ks.sent.d.toFixed(4)}, reconnects seen here ${ks.seen.d.toFixed(4)}); ` +
          `sent ${quantiles(sent)} ms, late by ${quantiles(relayLate)} ms; ` +
          `reconnects seen here ${quantiles(reconnectsSeen)} ms; notice receipt behind its stamp ${quantiles(receipt)} ms; ` +
          `notice→reconnect ${quantiles(lags)} ms, 0-ms timer→reconnect ${quantiles(reactions)} ms (min/p1/p10/p50/p90/p99/max); test event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(0)} ms, ` +
          `max ${(loopDelay.max / 1e6).toFixed(0)} ms; relay A's notices late by ${JSON.stringify(late)}; A exited after ${(end.at - sigtermAt).toFixed(0)} ms; ${CLIENTS} clients went live in ${connectMs.toFixed(0)} ms`,
      );
      expect(ks.due.pass, `notices due: KS D=${ks.due.d} > ${ks.due.critical}`).toBe(true);
      expect(ks.reconnects.pass, `reconnects on the relay's clock: KS D=${ks.reconnects.d} > ${ks.reconnects.critical}`).toBe(true);
      // The relay sent each notice at or after its due time (none early: the deadline never came),
      // give or take Node's timers, which run on the event loop's millisecond clock and were seen to
      // fire up to 2 ms early by Date.now(); and its frames' lateness is the lateness it logs.
      expect(Math.min(...relayLate), `late by ${quantiles(relayLate)}`).toBeGreaterThanOrEqual(-5);
      expect(Math.abs(Math.max(...relayLate) - (late?.maxMs ?? Number.NaN))).toBeLessThanOrEqual(1);
      expect(late?.notices).toBe(CLIENTS);
      // Sent within the window, give or take the relay's own timer lateness on a loaded machine.
      expect(Math.max(...sent)).toBeLessThan(WINDOW_MS + 1_000);
      // Each client reconnects on the notice itself: with a 10 s backoff base, a client that
      // backed off instead would show up here. Timed from a 0-ms timer set as the notice arrived,
      // so that this process's own stalls (seconds, on a loaded machine) are not counted.
      expect(
        lags.every((lag) => lag >= 0) && reactions.every((r) => r < 5_000),
        `notice→reconnect ${quantiles(lags)}; 0-ms timer→reconnect ${quantiles(reactions)}`,
      ).toBe(true);
      // And all within the window and a few seconds, on the relay's clock: its stamp plus the
      // client's own reaction (this process saw the last ones up to 8 s late at load 20).
      expect(Math.max(...sent.map((t, i) => t + (reactions[i] ?? Number.NaN)))).toBeLessThan(WINDOW_MS + 5_000);

      // Everyone ends on B, live.
      expect(clients.every((c) => c.trace.reconnectedTo === b.url && c.recorder.client.url === b.url)).toBe(true);
      await waitFor(() => clients.every((c) => c.recorder.sub.state === 'live'), {
        timeoutMs: 10_000,
        message: 'not every client is live on B',
      });
      expect(metricValue(await b.metrics(), 'streamgate_relay_connections')).toBe(CLIENTS);

      // Complete and duplicate-free: every client holds exactly seq 0 … count-1 of its stream.
      await publishing.stop();
      const counts = [...publishing.counts];
      await waitFor(() => clients.every((c) => c.recorder.seqs.length >= (counts[c.streamIndex] ?? 0)), {
        timeoutMs: 15_000,
        message: 'clients never received the last events',
      });
      const broken = clients
        .map((c, i) => ({ i, problem: gapsAndDuplicates(c.recorder.seqs, 0, counts[c.streamIndex] ?? 0) }))
        .filter((x) => x.problem !== null);
      expect(broken.slice(0, 5)).toEqual([]);
      expect(clients.every((c) => c.recorder.errors.length === 0 && c.recorder.recoveries.length === 0)).toBe(true);

      // The whole drain cost the auth backend nothing: every client resumed with the token it held.
      expect(await authTokenRequests(fleet)).toBe(authBefore);
    } finally {
      for (const c of clients) c.recorder.close();
    }
  }, 240_000);

  it('a second SIGTERM spreads what is left of the drain over the fast window', async () => {
    const fleet = getFleet();
    const b = fleet.relays[0];
    if (b === undefined) throw new Error('relay B missing');
    const FAST_MS = 2_000;
    const c = await fleet.startRelay({ RELAY_DRAIN_WINDOW_MS: '600000', RELAY_DRAIN_FAST_WINDOW_MS: String(FAST_MS) });
    const clients = await connectClients(fleet, [c.url, b.url], ['hurry'], 100);
    try {
      expect(c.service.signal('SIGTERM')).toBe(true);
      await waitFor(async () => (await readyStatus(c)) === 503, { timeoutMs: 10_000, message: '/readyz still 200 while draining' });
      // With a 10-minute window hardly anyone has left yet.
      expect(clients.filter((x) => x.trace.noticeAt !== null).length).toBeLessThan(5);
      const hurriedAt = performance.now();
      expect(c.service.signal('SIGTERM')).toBe(true);
      const status = await withDeadline(c.service.exited, FAST_MS + 10_000, 'relay did not exit after the fast drain');
      expect(status.code).toBe(0);
      await waitFor(() => clients.every((x) => x.trace.reconnectedAt !== null && x.recorder.sub.state === 'live'), {
        timeoutMs: 10_000,
        message: 'not every client moved to B',
      });
      const after = clients.map((x) => (x.trace.noticeAt ?? Number.NaN) - hurriedAt).filter((t) => t >= 0);
      expect(after.length).toBeGreaterThan(95);
      // All gone within the fast window (plus this loaded machine's scheduling), not the 10 minutes.
      expect(Math.max(...after)).toBeLessThan(FAST_MS + 5_000);
      // Still spread, not a herd: the notices are not all in the first tenth of the fast window.
      expect(after.filter((t) => t < FAST_MS / 10).length).toBeLessThan(50);
      expect(c.service.lines.some((l) => l.includes('"msg":"drain hurried"'))).toBe(true);
    } finally {
      for (const x of clients) x.recorder.close();
    }
  });
});
