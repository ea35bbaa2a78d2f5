import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Client } from 'aedes';
import { describe, expect, it } from 'vitest';
import { postJson } from '../__fixtures__/venueSession.js';
import { waitFor } from '../waitFor.js';
import { PublishLoop } from './PublishLoop.js';
import type { VenueSessionState } from './SessionRegistry.js';
import { startVenueSim } from './startVenueSim.js';
import type { VenueKind } from './venueKinds.js';
import { VENUE_KINDS } from './venueKinds.js';

interface Frame {
  topic: string;
  payload: string;
}

/** Splits written bytes back into QoS 0 PUBLISH frames (what a client's parser would see). */
function decodeFrames(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < bytes.length) {
    expect(bytes[at]).toBe(0x30);
    at += 1;
    let remaining = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++] ?? 0;
      remaining += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) break;
    }
    const end = at + remaining;
    const topicLength = bytes.readUInt16BE(at);
    const topic = bytes.subarray(at + 2, at + 2 + topicLength).toString();
    frames.push({ topic, payload: bytes.subarray(at + 2 + topicLength, end).toString() });
    at = end;
  }
  return frames;
}

interface FakeClient {
  client: Client;
  writes: Buffer[];
  frames: () => Frame[];
  conn: { destroyed: boolean; writableNeedDrain: boolean };
}

/** Just enough of an aedes Client for the loop: its socket records what is written. */
function fakeClient(id: string): FakeClient {
  const writes: Buffer[] = [];
  const conn = { destroyed: false, writableNeedDrain: false, write: (chunk: Buffer) => writes.push(chunk) };
  const client = { id, closed: false, conn };
  return { client: client as unknown as Client, writes, frames: () => writes.flatMap(decodeFrames), conn };
}
function session(fake: FakeClient, symbols: string[], kinds: readonly VenueKind[] = VENUE_KINDS): VenueSessionState {
  return {
    id: fake.client.id,
    appKey: 'k',
    client: fake.client,
    subscribed: new Map(symbols.map((s) => [s, new Set(kinds)])),
    silenced: false,
  };
}

const seqOf = (frame: Frame | undefined) => (JSON.parse(frame?.payload ?? 'null') as { seq: number }).seq;

describe('PublishLoop', () => {
  it('gives a (symbol, kind) one seq per round, shared by every session holding it', () => {
    const a = fakeClient('a');
    const b = fakeClient('b');
    const sessions = [session(a, ['AAPL'], ['quote']), session(b, ['AAPL', 'MSFT'], ['quote'])];
    const loop = new PublishLoop({ intervalMs: 50, kinds: VENUE_KINDS, sessions: () => sessions });
    loop.round();
    loop.round();
    expect(a.frames().map((f) => [f.topic, seqOf(f)])).toEqual([
      ['quote/AAPL', 1],
      ['quote/AAPL', 2],
    ]);
    expect(b.frames().map((f) => [f.topic, seqOf(f)])).toEqual([
      ['quote/AAPL', 1],
      ['quote/MSFT', 1],
      ['quote/AAPL', 2],
      ['quote/MSFT', 2],
    ]);
    // One write per session per round.
    expect(b.writes).toHaveLength(2);
    expect(a.frames()[0]?.payload).toBe(b.frames()[0]?.payload);
    expect(JSON.parse(a.frames()[0]?.payload ?? 'null')).toMatchObject({ symbol: 'AAPL', kind: 'quote', seq: 1 });
    expect(loop.published()).toMatchObject({ total: 6, byKind: { quote: 6, snapshot: 0, tick: 0 }, bySession: { a: 2, b: 4 } });
  });

  it('skips silenced, closed and backpressured sessions without queueing for them', () => {
    const [quiet, gone, full, fine] = ['quiet', 'gone', 'full', 'fine'].map(fakeClient) as [FakeClient, FakeClient, FakeClient, FakeClient];
    const sessions = [quiet, gone, full, fine].map((f) => session(f, ['AAPL']));
    sessions[0]!.silenced = true;
    gone.conn.destroyed = true;
    full.conn.writableNeedDrain = true;
    const loop = new PublishLoop({ intervalMs: 50, kinds: ['snapshot'], sessions: () => sessions });
    loop.round();
    expect([quiet, gone, full, fine].map((f) => f.frames().length)).toEqual([0, 0, 0, 1]);
    expect(loop.published().skippedBackpressure).toBe(1);
    full.conn.writableNeedDrain = false;
    loop.round();
    // No backlog: the skipped round is gone, the session just gets the current one.
    expect(full.frames().map((f) => seqOf(f))).toEqual([2]);
  });

  it('stays cheap for 500 symbols x 3 kinds across five sessions', () => {
    const symbols = Array.from({ length: 500 }, (_, i) => `SYM${i}`);
    const fakes = Array.from({ length: 5 }, (_, i) => fakeClient(`s${i}`));
    const sessions = fakes.map((f, i) => session(f, symbols.slice(i * 100, i * 100 + 100)));
    const loop = new PublishLoop({ intervalMs: 50, kinds: VENUE_KINDS, sessions: () => sessions });
    loop.round(); // warm-up
    const rounds = 20;
    // CPU time this process spent, not wall time: the claim is about what a round costs, and on a
    // shared 2-core machine (CI runs this beside cross-process files and their servers) the wall
    // clock mostly measures how long the process waited for a core: 40-100 ms a round was seen
    // under load while the CPU time stayed at 4-10 ms.
    const before = process.cpuUsage();
    for (let i = 0; i < rounds; i += 1) loop.round();
    const used = process.cpuUsage(before);
    const perRoundMs = (used.user + used.system) / 1_000 / rounds;
    expect(loop.published().total).toBe(1_500 * (rounds + 1));
    // About 5 ms when idle, 10 ms at worst under load and coverage; the point is well inside the
    // 50 ms interval, so half of it is the bound.
    expect(perRoundMs).toBeLessThan(25);
  });
});

/** A hand-written MQTT 3.1.1 CONNECT (clean session, username): a client that then never reads. */
function rawConnect(port: number, clientId: string, username: string): Socket {
  const str = (s: string) => {
    const bytes = Buffer.from(s, 'utf8');
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0x82, 0, 60]), str(clientId), str(username)]);
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body]));
  return socket;
}

describe('PublishLoop against a client that stops reading', () => {
  it('skips the session while its socket is full and resumes once it drains', async () => {
    await using venue = await startVenueSim({ publishIntervalMs: 10, symbolCeiling: 500 });
    const socket = rawConnect(venue.mqttPort, 'slow', 'sim-app-key');
    try {
      await waitFor(() => venue.session('slow') !== undefined, { timeoutMs: 5_000, message: 'raw session registered' });
      const symbols = Array.from({ length: 500 }, (_, i) => `SYM${i}`);
      const answer = await postJson(
        `${venue.httpUrl}/v1/market-data/subscribe`,
        { session_id: 'slow', symbols, sub_types: ['SNAPSHOT', 'QUOTE', 'TICK'] },
        'sim-app-key',
      );
      expect(answer.status).toBe(200);
      await waitFor(() => venue.published().skippedBackpressure > 0, { timeoutMs: 15_000, message: 'venue skipped the full socket' });
      const sentWhileFull = venue.published().bySession.slow ?? 0;
      socket.resume();
      await waitFor(() => (venue.published().bySession.slow ?? 0) > sentWhileFull, {
        timeoutMs: 10_000,
        message: 'publishing resumed after drain',
      });
    } finally {
      socket.destroy();
    }
  });
});
