import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Redis } from 'ioredis';
import { RelayClient } from '@streamgate/client';
import { demoStream } from '@streamgate/auth';
import type { DemoEvent } from '@streamgate/auth';
import { createPublisher } from '@streamgate/server';
import { CloseCode, parseServerFrame } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet } from './support/startFleet.js';
import { gapsAndDuplicates } from './support/recorder.js';
import { rawText } from './support/rawSocket.js';

const LISTENERS = 100;
const PER_ROUND = 160;
const WARMUP = 40;
const TOTAL = WARMUP + 3 * PER_ROUND;
/** One entry every 50 ms: 640 KB/s to each socket, so the 101 sockets stay well inside what one core parses. */
const TICK_MS = 50;
// The kernel absorbs about 4 MB for a socket nobody reads (loopback send-buffer autotuning)
// before the relay's own buffer grows; large entries get there with few frames.
const TEXT = 'x'.repeat(32_000);

/** `ws` without UTF-8 validation of every frame in JavaScript: the listeners' cost is then mostly parsing. */
class ListenerSocket extends WebSocket {
  constructor(url: string | URL, protocols?: string | string[]) {
    super(url, protocols, { skipUTF8Validation: true });
  }
}

const getFleet = useFleet({
  relayEnv: { RELAY_MAX_BACKPRESSURE_BYTES: String(256 * 1024), RELAY_MAX_PENDING_CATCHUP_BYTES: String(64 * 1024) },
});

/** Publishes seq [from, to) open-loop, `perTick` entries every TICK_MS, each stamped with its intended send time. */
async function publishPaced(redis: Redis, stream: string, from: number, to: number, perTick: number): Promise<void> {
  const publisher = createPublisher({ redis, maxLen: 1_000_000 });
  const ref = demoStream.for(stream);
  const start = Date.now();
  for (let tick = 0, seq = from; seq < to; tick++) {
    const due = start + tick * TICK_MS;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const batch = [];
    for (let i = 0; i < perTick && seq < to; i++, seq++) {
      batch.push(publisher.publish(ref, { seq, text: TEXT, at: new Date(due).toISOString() }));
    }
    for (const r of await Promise.all(batch)) if (!r.ok) throw new Error(`publish failed: ${r.error.code}`);
  }
}

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? Number.NaN;
}

/** A raw socket that subscribes and then stops reading: the kernel's buffers fill, then the relay's. */
async function stalledReader(
  url: string,
  token: string,
): Promise<{ ids: StreamId[]; seqs: number[]; start: () => StreamId | undefined; closed: Promise<number>; resume(): void }> {
  const ws = new WebSocket(url);
  const ids: StreamId[] = [];
  const seqs: number[] = [];
  let start: StreamId | undefined;
  const subscribed = new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const parsed = parseServerFrame(rawText(data));
      if (!parsed.ok) return;
      const f = parsed.frame;
      if (f.op === 'subscribed') {
        start = f.position;
        resolve();
      }
      if (f.op === 'event') {
        ids.push(f.id);
        seqs.push((f.data as DemoEvent).seq);
      }
    });
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await withDeadline(new Promise((resolve) => ws.once('open', resolve)), 10_000, 'stalled reader never connected');
  ws.send(JSON.stringify({ op: 'subscribe', sid: 'slow', token }));
  await withDeadline(subscribed, 10_000, 'stalled reader never subscribed');
  ws.pause();
  return { ids, seqs, start: () => start, closed, resume: () => ws.resume() };
}

async function round(fleet: Fleet, stream: string, from: number, count: number, received: Array<number[]>): Promise<void> {
  const redis = fleet.redis.client();
  await publishPaced(redis, stream, from, from + count, 1);
  await waitFor(() => received.every((r) => r.length >= from + count), {
    timeoutMs: 30_000,
    message: `listeners never received round ending at ${from + count}`,
  });
}

describe('slow consumers', () => {
  it('cuts a client that stops reading with 4001; it resumes with nothing lost, and the other 100 keep their latency', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = 'slow-consumer';
    const received: number[][] = [];
    const latencies: number[][] = [[], [], []];
    // -1 records nothing: the warm-up round, so JIT and socket buffers settle before the baseline.
    let phase = -1;
    const clients: RelayClient[] = [];
    try {
      for (let i = 0; i < LISTENERS; i++) {
        const client = new RelayClient({ urls: [relay.url], WebSocket: ListenerSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
        clients.push(client);
        const mine: number[] = [];
        received.push(mine);
        client.subscribe<DemoEvent>({
          getToken: () => fleet.trpc.demo.token.query({ stream, user: 'alice' }),
          onEvent: (data) => {
            latencies[phase]?.push(Date.now() - Date.parse(data.at));
            mine.push(data.seq);
          },
        });
      }
      await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_subscriptions') === LISTENERS, {
        timeoutMs: 30_000,
        message: 'listeners never all subscribed',
      });

      await round(fleet, stream, 0, WARMUP, received);
      // Round 0: no slow client, the baseline.
      phase = 0;
      await round(fleet, stream, WARMUP, PER_ROUND, received);

      // Round 1: the same load with a client that stops reading.
      phase = 1;
      const token = await fleet.trpc.demo.token.query({ stream, user: 'bob' });
      const slow = await stalledReader(relay.url, token.token);
      const cutsBefore = metricValue(await relay.metrics(), 'streamgate_relay_slow_consumer_cuts_total');
      await round(fleet, stream, WARMUP + PER_ROUND, PER_ROUND, received);
      await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_slow_consumer_cuts_total') > cutsBefore, {
        timeoutMs: 20_000,
        message: 'the stalled reader was never cut',
      });

      // Round 2: the slow client is gone; a second baseline, so that drift in the machine's own
      // load during the test shows in both baselines rather than in the comparison.
      phase = 2;
      await round(fleet, stream, WARMUP + 2 * PER_ROUND, PER_ROUND, received);

      for (const r of received) expect(gapsAndDuplicates(r, 0, TOTAL)).toBeNull();
      const [before, withSlow, after] = latencies.map(p99) as [number, number, number];
      const base = (before + after) / 2;
      console.log(`p99 latency of ${LISTENERS} listeners: ${before} ms and ${after} ms alone, ${withSlow} ms beside a stalled reader`);
      expect(withSlow).toBeLessThanOrEqual(2 * base);

      // The stalled reader reads again: what was queued arrives, then the close code telling it to resume.
      slow.resume();
      expect(await withDeadline(slow.closed, 20_000, 'stalled reader never saw its close')).toBe(CloseCode.slowConsumer);
      const last = slow.ids[slow.ids.length - 1] ?? slow.start();
      const resumed = new RelayClient({ urls: [relay.url], WebSocket });
      clients.push(resumed);
      const rest: number[] = [];
      resumed.subscribe<DemoEvent>({
        getToken: () => fleet.trpc.demo.token.query({ stream, user: 'bob' }),
        ...(last === undefined ? {} : { from: last }),
        onEvent: (data) => rest.push(data.seq),
      });
      // It subscribed fresh just before round 1, so everything from that round's first seq on is its due.
      const first = WARMUP + PER_ROUND;
      await waitFor(() => slow.seqs.length + rest.length >= TOTAL - first, {
        timeoutMs: 20_000,
        message: 'the cut client never caught up',
      });
      expect(gapsAndDuplicates([...slow.seqs, ...rest], first, TOTAL)).toBeNull();
    } finally {
      for (const c of clients) c.close();
    }
  });
});
