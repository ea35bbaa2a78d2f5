import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CloseCode } from '@streamgate/protocol';
import { RelayClient } from '@streamgate/client';
import type { DemoEvent } from '@streamgate/auth';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import { openRawSocket } from './support/rawSocket.js';
import type { RawSocket } from './support/rawSocket.js';
import { publishSequence } from './support/publishSequence.js';
import { gapsAndDuplicates } from './support/recorder.js';

const getFleet = useFleet();

const breaches = async (metrics: () => Promise<string>, limit: string): Promise<number> =>
  metricValue(await metrics(), 'streamgate_relay_limit_breaches_total', `limit="${limit}"`);

describe('per-pod connection limits', () => {
  it('refuses the connection past the cap with 4003, serves the others, and admits again once one leaves', async () => {
    const fleet = getFleet();
    const relay = await fleet.startRelay({ RELAY_MAX_CONNECTIONS: '5' });
    const open: RawSocket[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const s = await openRawSocket(relay.url);
        await s.next((f) => f.op === 'welcome');
        open.push(s);
      }
      const refused = await openRawSocket(relay.url);
      const closed = await withDeadline(refused.closed, 10_000, 'the sixth socket was never closed');
      expect(closed.code).toBe(CloseCode.overloaded);
      expect(refused.frames).toEqual([]);
      expect(await breaches(() => relay.metrics(), 'connections')).toBe(1);

      // The five admitted sockets still work.
      for (const s of open) s.send(JSON.stringify({ op: 'ping', t: 1 }));
      for (const s of open) await s.next((f) => f.op === 'pong');

      open.pop()?.close();
      await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_connections') === 4, {
        timeoutMs: 10_000,
        message: 'the closed socket was never released',
      });
      const again = await openRawSocket(relay.url);
      open.push(again);
      await again.next((f) => f.op === 'welcome');
    } finally {
      for (const s of open) s.close();
      await relay.service.stop();
    }
  });

  it('refuses new connections past the per-second rate with 4004; a client backs off, moves on and resumes', async () => {
    const fleet = getFleet();
    const limited = await fleet.startRelay({ RELAY_MAX_CONNECTIONS_PER_SECOND: '1' });
    const sockets: RawSocket[] = [];
    try {
      // A burst of 10 at once: the bucket holds 1 and refills one a second.
      const burst = await Promise.all(Array.from({ length: 10 }, () => openRawSocket(limited.url)));
      sockets.push(...burst);
      const outcomes = await Promise.all(
        burst.map((s) => Promise.race([s.next((f) => f.op === 'welcome').then(() => 'admitted' as const), s.closed.then((c) => c.code)])),
      );
      expect(outcomes.filter((o) => o === 'admitted').length).toBeLessThanOrEqual(2);
      expect(outcomes.filter((o) => o === CloseCode.connectionRateLimited).length).toBeGreaterThanOrEqual(8);
      expect(await breaches(() => limited.metrics(), 'connection_rate')).toBeGreaterThanOrEqual(8);

      // A real client told to back off lands on its next URL and misses nothing.
      const stream = 'limits-rate';
      const survivor = fleet.relays[0];
      if (survivor === undefined) throw new Error('no relay');
      const redis = fleet.redis.client();
      const seqs: number[] = [];
      const client = new RelayClient({ urls: [limited.url, survivor.url], WebSocket, backoff: { baseMs: 20, maxMs: 200 } });
      try {
        // Drain the bucket again so the client's first attempt is refused.
        const more = await Promise.all(Array.from({ length: 3 }, () => openRawSocket(limited.url)));
        sockets.push(...more);
        const sub = client.subscribe<DemoEvent>({
          getToken: () => fleet.trpc.demo.token.query({ stream, user: 'alice' }),
          from: '0-0',
          onEvent: (data) => seqs.push(data.seq),
        });
        await publishSequence(redis, stream, 0, 200);
        await waitFor(() => seqs.length >= 200, { timeoutMs: 20_000, message: 'client never received the stream' });
        expect(gapsAndDuplicates(seqs, 0, 200)).toBeNull();
        // Every entry can arrive while the subscription is still catching up (it reads from 0-0
        // while they are written); `live` follows the last of them.
        await waitFor(() => sub.state === 'live', { timeoutMs: 5_000, message: 'the subscription never went live' });
        expect(client.url).toBe(survivor.url);
      } finally {
        client.close();
      }
    } finally {
      for (const s of sockets) s.close();
      await limited.service.stop();
    }
  });

  it('closes a socket that sends 100 unusable frames in a row with 4400, after answering each, and keeps serving the others', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const before = await breaches(() => relay.metrics(), 'protocol_violation');
    const bystander = await openRawSocket(relay.url);
    const socket = await openRawSocket(relay.url);
    try {
      await socket.next((f) => f.op === 'welcome');
      // A usable frame in between ends the run: 99 + ping + 99 keeps the socket.
      for (let i = 0; i < 99; i++) socket.send('not json');
      socket.send(JSON.stringify({ op: 'ping', t: 1 }));
      for (let i = 0; i < 99; i++) socket.send('{"op":"launch"}');
      socket.send(JSON.stringify({ op: 'ping', t: 2 }));
      await socket.next((f) => f.op === 'pong' && f.t === 2);
      for (let i = 0; i < 100; i++) socket.send(Buffer.from([1, 2, 3]));
      const closed = await withDeadline(socket.closed, 10_000, 'the relay kept a socket that sent only unusable frames');
      expect(closed.code).toBe(CloseCode.protocolViolation);
      expect(socket.frames.filter((f) => f.op === 'error')).toHaveLength(99 + 99 + 100);
      expect(await breaches(() => relay.metrics(), 'protocol_violation')).toBe(before + 1);
      bystander.send(JSON.stringify({ op: 'ping', t: 3 }));
      await bystander.next((f) => f.op === 'pong' && f.t === 3);
    } finally {
      socket.close();
      bystander.close();
    }
  });
});
