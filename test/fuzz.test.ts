import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { parseClientFrame } from '@streamgate/protocol';
import type { ErrorCode, ServerFrame } from '@streamgate/protocol';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet, FleetRelay } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';
import { openRawSocket } from './support/rawSocket.js';
import type { RawSocket } from './support/rawSocket.js';
import { FrameFuzzer, prng } from './support/fuzzFrames.js';
import type { FuzzFrame } from './support/fuzzFrames.js';

const MAX_FRAME_BYTES = 4_096;
const MAX_SUBSCRIPTIONS = 3;
const getFleet = useFleet({
  relays: 1,
  relayEnv: {
    RELAY_MAX_FRAME_BYTES: String(MAX_FRAME_BYTES),
    RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET: String(MAX_SUBSCRIPTIONS),
    // A capped old space, like a container limit, makes V8 collect during the run instead of
    // growing its heap with garbage (uncapped, it ran one major GC in the whole test and the used
    // heap said nothing about leaks). A leak then shows as heap above baseline, or as an OOM.
    NODE_OPTIONS: '--max-old-space-size=80',
  },
});

const FRAMES = Number(process.env.FUZZ_FRAMES ?? 100_000);
const SOCKETS = 50;
const BATCH = 100;
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32));
/**
 * Memory after the fuzz, against a baseline taken after a warm-up (a test cannot force a GC in
 * another process, so both are read from /metrics and the check waits, with a deadline, for the
 * relay to settle under the bound). The used JS heap must come back within 12 MB of baseline:
 * 100 000 frames leaking 120 bytes each would exceed it. RSS gets 32 MB: V8 and the allocator
 * keep freed pages for reuse (measured here: peak and after about 8 MB over baseline).
 */
const HEAP_TOLERANCE_BYTES = 12 * 1024 * 1024;
const RSS_TOLERANCE_BYTES = 32 * 1024 * 1024;

/** Frames the protocol answers with exactly one frame of these kinds. */
const ANSWERS = new Set(['error', 'pong', 'subscribed', 'unsubscribed', 'refreshed']);

const relayOf = (fleet: Fleet): FleetRelay => {
  const relay = fleet.relays[0];
  if (relay === undefined) throw new Error('no relay');
  return relay;
};
const rss = async (relay: FleetRelay): Promise<number> => metricValue(await relay.metrics(), 'process_resident_memory_bytes');
const heapUsed = async (relay: FleetRelay): Promise<number> => metricValue(await relay.metrics(), 'nodejs_heap_size_used_bytes');
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function closedWithin(ws: WebSocket, ms: number): Promise<number> {
  return withDeadline(
    new Promise<number>((resolve) => ws.once('close', (code) => resolve(code))),
    ms,
    'the relay kept a socket that sent a frame its transport refuses',
  );
}

async function openWs(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await withDeadline(
    new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject))),
    10_000,
    'socket never opened',
  );
  return ws;
}

describe('malformed input', () => {
  it('answers every kind of bad frame with its typed error and keeps the socket and the relay serving', async () => {
    const fleet = getFleet();
    const relay = relayOf(fleet);
    const tokens = await Promise.all(
      [0, 1, 2, 3].map(async (i) => (await fleet.trpc.demo.token.query({ stream: `malformed-${i}`, user: 'alice' })).token),
    );
    const before = await relay.metrics();
    const socket = await openRawSocket(relay.url);
    try {
      expect(await socket.next((f) => f.op === 'welcome')).toMatchObject({
        limits: { maxFrameBytes: MAX_FRAME_BYTES, maxSubscriptions: MAX_SUBSCRIPTIONS },
      });
      const expectAnswer = async (frame: string | Buffer, code: ErrorCode, sid?: string): Promise<void> => {
        const seen = socket.frames.length;
        socket.send(frame);
        const answer = await socket.next((f) => socket.frames.indexOf(f) >= seen && (f.op === 'error' || f.op === 'subscribed'));
        const label = typeof frame === 'string' ? frame.slice(0, 60) : 'binary';
        expect({ label, ...answer }).toMatchObject({ label, op: 'error', code, ...(sid === undefined ? {} : { sid }) });
        if (sid === undefined) expect(answer).not.toHaveProperty('sid');
      };
      await expectAnswer('{"op":"ping"', 'frame_not_json');
      await expectAnswer('not json at all', 'frame_not_json');
      await expectAnswer('[{"op":"ping"}]', 'frame_invalid');
      await expectAnswer('null', 'frame_invalid');
      await expectAnswer('"ping"', 'frame_invalid');
      await expectAnswer('{"op":"ping","t":"soon"}', 'frame_invalid');
      await expectAnswer('{"op":"ping","t":1e400}', 'frame_invalid');
      await expectAnswer('{"op":"subscribe","sid":"bad sid!","token":"x"}', 'frame_invalid');
      await expectAnswer('{"op":"unsubscribe","sid":"a","extra":1}', 'frame_invalid', 'a');
      await expectAnswer('{"op":"ping","__proto__":{"t":1}}', 'frame_invalid');
      await expectAnswer('{"op":"launch"}', 'frame_unknown_op');
      await expectAnswer('{}', 'frame_unknown_op');
      await expectAnswer('{"op":"Ping"}', 'frame_unknown_op');
      await expectAnswer(JSON.stringify({ op: 'ping', pad: 'p'.repeat(MAX_FRAME_BYTES) }), 'frame_too_large');
      await expectAnswer(Buffer.from([1, 2, 3]), 'frame_binary');
      await expectAnswer('{"op":"unsubscribe","sid":"nobody"}', 'unknown_subscription', 'nobody');
      await expectAnswer('{"op":"refresh","sid":"nobody","token":"x.y.z"}', 'unknown_subscription', 'nobody');

      for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) {
        socket.send(JSON.stringify({ op: 'subscribe', sid: `ok${i}`, token: tokens[i] }));
        await socket.next((f) => f.op === 'subscribed' && f.sid === `ok${i}`);
      }
      await expectAnswer(JSON.stringify({ op: 'subscribe', sid: 'ok0', token: tokens[3] }), 'duplicate_subscription', 'ok0');
      await expectAnswer(JSON.stringify({ op: 'subscribe', sid: 'one-more', token: tokens[3] }), 'too_many_subscriptions', 'one-more');
      socket.send('{"op":"unsubscribe","sid":"ok2"}');
      await socket.next((f) => f.op === 'unsubscribed' && f.sid === 'ok2');
      await expectAnswer(JSON.stringify({ op: 'subscribe', sid: 'same-stream', token: tokens[0] }), 'duplicate_stream', 'same-stream');

      // Still the same socket, still serving.
      socket.send('{"op":"ping","t":42}');
      expect(await socket.next((f) => f.op === 'pong')).toMatchObject({ t: 42 });
      expect(socket.unparsed).toEqual([]);
      const after = await relay.metrics();
      for (const code of [
        'frame_not_json',
        'frame_invalid',
        'frame_unknown_op',
        'frame_too_large',
        'frame_binary',
        'too_many_subscriptions',
      ] as const) {
        const moved =
          metricValue(after, 'streamgate_relay_frame_errors_total', `code="${code}"`) -
          metricValue(before, 'streamgate_relay_frame_errors_total', `code="${code}"`);
        expect({ code, moved: moved > 0 }).toEqual({ code, moved: true });
      }
    } finally {
      socket.close();
    }

    // What the WebSocket layer itself refuses (docs/protocol.md §1): the socket is dropped, the relay lives on.
    const badUtf8 = await openWs(relay.url);
    badUtf8.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await closedWithin(badUtf8, 10_000)).toBe(1006);
    const huge = await openWs(relay.url);
    huge.send('x'.repeat(MAX_FRAME_BYTES * 4 + 1));
    expect(await closedWithin(huge, 10_000)).toBe(1006);
    expect((await fetch(`${relay.httpUrl}/healthz`)).status).toBe(200);
  });
});

/** One fuzz socket: sends batches and waits for the answers the protocol promises. */
class FuzzSocket {
  sent = 0;
  /** Frames that may legitimately go unanswered: a client `pong`, or a subscribe ended by a racing unsubscribe. */
  cancellable = 0;
  private counted = 0;
  private answers = 0;
  unexpectedClose: { code: number; reason: string } | null = null;
  private closing = false;

  constructor(readonly raw: RawSocket) {
    void raw.closed.then((c) => {
      if (!this.closing) this.unexpectedClose = c;
    });
  }

  answered(): number {
    const frames: ServerFrame[] = this.raw.frames;
    for (; this.counted < frames.length; this.counted++) if (ANSWERS.has(frames[this.counted]?.op ?? '')) this.answers++;
    return this.answers;
  }

  send(batch: readonly FuzzFrame[]): void {
    const subscribeSids = new Set<string>();
    for (const frame of batch) {
      this.sent++;
      if (frame.kind === 'binary') {
        this.raw.send(frame.bytes);
        continue;
      }
      this.raw.send(frame.text);
      if (Buffer.byteLength(frame.text) > MAX_FRAME_BYTES) continue;
      const parsed = parseClientFrame(frame.text);
      if (!parsed.ok) continue;
      // A client `pong` (the answer to the relay's ping) is the one valid frame answered with nothing.
      if (parsed.frame.op === 'pong') this.cancellable++;
      if (parsed.frame.op === 'subscribe') subscribeSids.add(parsed.frame.sid);
      // An unsubscribe that overtakes its subscribe's token check ends it: one answer for two frames.
      if (parsed.frame.op === 'unsubscribe' && subscribeSids.has(parsed.frame.sid)) this.cancellable++;
    }
  }

  close(): void {
    this.closing = true;
    this.raw.close();
  }
}

async function fuzz(relay: FleetRelay, fuzzer: FrameFuzzer, frames: number, onRound: () => void): Promise<FuzzSocket[]> {
  const sockets = await Promise.all(Array.from({ length: SOCKETS }, async () => new FuzzSocket(await openRawSocket(relay.url))));
  let remaining = frames;
  while (remaining > 0) {
    const round = sockets.map((s) => {
      const n = Math.min(BATCH, remaining);
      remaining -= n;
      // Generated in a fixed order from one PRNG: the seed alone reproduces every frame.
      return { s, batch: Array.from({ length: n }, () => fuzzer.next()) };
    });
    for (const { s, batch } of round) s.send(batch);
    await waitFor(() => sockets.every((s) => s.unexpectedClose !== null || s.answered() >= s.sent - s.cancellable), {
      timeoutMs: 30_000,
      message: `fuzz (seed ${SEED}): some socket got fewer answers than frames`,
    });
    onRound();
  }
  return sockets;
}

describe('fuzz', () => {
  it(`survives ${FRAMES} random and mutated frames over ${SOCKETS} sockets, answers each, serves on, and returns to its memory baseline`, async () => {
    console.log(`fuzz seed ${SEED} (reproduce: FUZZ_SEED=${SEED} npx vitest run --project e2e test/fuzz.test.ts)`);
    const fleet = getFleet();
    const relay = relayOf(fleet);
    const started = Date.now();
    const tokens = await Promise.all(
      [0, 1, 2].map(async (i) => (await fleet.trpc.demo.token.query({ stream: `fuzz-${i}`, user: 'alice' })).token),
    );
    const ids = await publishSequence(fleet.redis.client(), 'fuzz-0', 0, 20);
    const fuzzer = new FrameFuzzer(prng(SEED), { tokens, from: ids[10] ?? '0-0', maxFrameBytes: MAX_FRAME_BYTES });

    // Warm-up: the same work at a twentieth of the volume, so that JIT code, pools and caches exist.
    for (const s of await fuzz(relay, fuzzer, 5_000, () => undefined)) s.close();
    await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_connections') === 0, {
      timeoutMs: 10_000,
      message: 'warm-up sockets never closed',
    });
    const baseline = await settledRss(relay);
    const baselineHeap = await heapUsed(relay);

    let peak = baseline;
    let sampling = Promise.resolve();
    const sockets = await fuzz(relay, fuzzer, FRAMES, () => {
      sampling = sampling.then(async () => void (peak = Math.max(peak, await rss(relay))));
    });
    await sampling;
    const closedEarly = sockets.filter((s) => s.unexpectedClose !== null).map((s) => s.unexpectedClose);
    // The relay's own account, should it have died or cut sockets.
    if (closedEarly.length > 0) console.log(relay.service.exitStatus, relay.service.lines.slice(-30).join('\n'));
    expect(closedEarly).toEqual([]);
    const answered = sockets.reduce((n, s) => n + s.answered(), 0);
    const sent = sockets.reduce((n, s) => n + s.sent, 0);
    const cancellable = sockets.reduce((n, s) => n + s.cancellable, 0);
    expect(sent).toBe(FRAMES);
    // Exactly one answer per frame, except an unsubscribe that overtook its own subscribe.
    expect(answered).toBeGreaterThanOrEqual(sent - cancellable);
    expect(answered).toBeLessThanOrEqual(sent);
    // Every frame the relay sent is a valid server frame.
    expect(sockets.flatMap((s) => s.raw.unparsed)).toEqual([]);
    for (const s of sockets) s.close();
    await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_connections') === 0, {
      timeoutMs: 10_000,
      message: 'fuzz sockets never closed',
    });

    // Sockets that send what the WebSocket layer refuses are dropped, and only they.
    for (let i = 0; i < 20; i++) {
      const ws = await openWs(relay.url);
      ws.send(i % 2 === 0 ? Buffer.from([0x22, 0xc3, 0x28, 0x22]) : 'y'.repeat(MAX_FRAME_BYTES * 4 + 1), { binary: false });
      expect(await closedWithin(ws, 10_000)).toBe(1006);
    }

    // A normal client, end to end.
    const client = record(fleet, [relay.url], 'fuzz-after');
    try {
      await waitFor(() => client.sub.state === 'live', { timeoutMs: 10_000, message: 'client never went live after the fuzz' });
      await publishSequence(fleet.redis.client(), 'fuzz-after', 0, 500);
      await waitFor(() => client.seqs.length >= 500, { timeoutMs: 20_000, message: 'client got no events after the fuzz' });
      expect(gapsAndDuplicates(client.seqs, 0, 500)).toBeNull();
    } finally {
      client.close();
    }

    const heapBound = baselineHeap + HEAP_TOLERANCE_BYTES;
    let heapAfter = await heapUsed(relay);
    await waitFor(async () => (heapAfter = await heapUsed(relay)) <= heapBound, {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: `relay heap stayed above ${mb(heapBound)} (baseline ${mb(baselineHeap)}, seed ${SEED})`,
    });
    const bound = baseline + RSS_TOLERANCE_BYTES;
    let after = await rss(relay);
    await waitFor(async () => (after = await rss(relay)) <= bound, {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: `relay RSS stayed above ${mb(bound)} (baseline ${mb(baseline)}, peak ${mb(peak)}, seed ${SEED})`,
    });
    console.log(
      `fuzz seed ${SEED}: ${sent} frames, ${answered} answers (${cancellable} cancellable), RSS baseline ${mb(baseline)}, peak ${mb(peak)}, after ${mb(after)}; ` +
        `heap used baseline ${mb(baselineHeap)}, after ${mb(heapAfter)}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});

/** RSS once two samples a second apart agree within 2 MB: the warm-up's garbage has been dealt with. */
async function settledRss(relay: FleetRelay): Promise<number> {
  let last = await rss(relay);
  let settled = last;
  await waitFor(
    async () => {
      const now = await rss(relay);
      const stable = Math.abs(now - last) < 2 * 1024 * 1024;
      last = now;
      settled = now;
      return stable;
    },
    { timeoutMs: 15_000, intervalMs: 1_000, message: 'relay RSS never settled after warm-up' },
  );
  return settled;
}
