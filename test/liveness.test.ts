import { describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { RelayClient } from '@streamgate/client';
import { startTcpProxy, waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';
import { rawText } from './support/rawSocket.js';

const PING_INTERVAL_MS = 1_000;
const GRACE_MS = 1_000;
/** The client's "heard nothing" bound (docs/protocol.md §8, Liveness). */
const CLIENT_BOUND_MS = PING_INTERVAL_MS + GRACE_MS;
/** Timer lateness on a loaded 2-core machine, on top of the bound; measured values are logged. */
const SCHEDULING_SLACK_MS = 1_000;

const getFleet = useFleet({ relays: 2, relayEnv: { RELAY_PING_INTERVAL_MS: String(PING_INTERVAL_MS) } });

describe('liveness across processes', () => {
  it('a half-open socket: the client resumes on another relay within the bound, with no gap, and the relay drops the dead socket', async () => {
    const fleet = getFleet();
    const [dead, alive] = fleet.relays;
    if (dead === undefined || alive === undefined) throw new Error('two relays expected');
    await using proxy = await startTcpProxy({ host: '127.0.0.1', port: dead.port });
    const viaProxy = `ws://127.0.0.1:${proxy.port}/v1/ws`;
    const client = new RelayClient({
      urls: [viaProxy, alive.url],
      WebSocket,
      backoff: { baseMs: 50, maxMs: 1_000 },
      livenessGraceMs: GRACE_MS,
    });
    const stream = 'liveness-half-open';
    const redis = fleet.redis.client();
    const rec = record(fleet, [], stream, { client });
    try {
      await waitFor(() => rec.sub.state === 'live', { timeoutMs: 10_000, message: 'client never went live through the proxy' });
      expect(client.url).toBe(viaProxy);
      expect(metricValue(await dead.metrics(), 'streamgate_relay_connections')).toBe(1);

      const total = 1_500;
      const publishing = publishSequence(redis, stream, 0, total, 5);
      await waitFor(() => rec.seqs.length >= 200, { timeoutMs: 20_000, message: 'no events through the proxy' });
      proxy.blackhole();
      const holedAt = Date.now();
      const seenWhenHoled = rec.seqs.length;

      await waitFor(() => client.url === alive.url && rec.sub.state !== 'connecting', {
        timeoutMs: CLIENT_BOUND_MS + 10_000,
        message: 'client never left the half-open socket',
      });
      const movedAfterMs = Date.now() - holedAt;
      console.log(`half-open: client resubscribed on the other relay ${movedAfterMs} ms after the blackhole (bound ${CLIENT_BOUND_MS} ms)`);
      expect(movedAfterMs).toBeLessThanOrEqual(CLIENT_BOUND_MS + SCHEDULING_SLACK_MS);
      expect(rec.seqs.length).toBeGreaterThanOrEqual(seenWhenHoled);

      await publishing;
      await waitFor(() => rec.seqs.length >= total, { timeoutMs: 30_000, message: 'client never caught up on the other relay' });
      expect(gapsAndDuplicates(rec.seqs, 0, total)).toBeNull();
      expect(rec.recoveries).toEqual([]);

      // The relay heard nothing either (the proxy passes no close): its own sweep ends the socket
      // within two intervals, long before uWS's idle timeout (60 s).
      await waitFor(async () => metricValue(await dead.metrics(), 'streamgate_relay_connections') === 0, {
        timeoutMs: 2 * PING_INTERVAL_MS + 10_000,
        message: 'the relay kept the dead socket',
      });
      const droppedAfterMs = Date.now() - holedAt;
      console.log(`half-open: relay dropped the dead socket ${droppedAfterMs} ms after the blackhole (bound ${2 * PING_INTERVAL_MS} ms)`);
      expect(droppedAfterMs).toBeLessThanOrEqual(2 * PING_INTERVAL_MS + SCHEDULING_SLACK_MS);
      expect(metricValue(await dead.metrics(), 'streamgate_relay_ping_timeouts_total')).toBe(1);
    } finally {
      rec.close();
    }
  });
});

/** A WebSocket proxy in front of a relay that swallows the first `subscribe` frame and forwards everything else. */
async function startSubscribeSwallower(target: string): Promise<{ url: string; subscribes: number; close(): Promise<void> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const state = { subscribes: 0 };
  server.on('connection', (client) => {
    const upstream = new WebSocket(target);
    const pending: string[] = [];
    upstream.on('open', () => {
      for (const text of pending.splice(0)) upstream.send(text);
    });
    upstream.on('message', (data: Buffer) => client.send(data.toString('utf8')));
    client.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (text.includes('"op":"subscribe"') && state.subscribes++ === 0) return;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else pending.push(text);
    });
    client.on('close', () => upstream.close());
    upstream.on('close', () => client.close());
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('no port');
  return {
    url: `ws://127.0.0.1:${address.port}/v1/ws`,
    get subscribes() {
      return state.subscribes;
    },
    close: async () => {
      for (const c of server.clients) c.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('unanswered requests across processes', () => {
  it('a subscribe held unanswered is withdrawn and sent again, and the subscription goes live on the real relay', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[1];
    if (relay === undefined) throw new Error('relay expected');
    const swallower = await startSubscribeSwallower(relay.url);
    const requestTimeoutMs = 1_000;
    const client = new RelayClient({ urls: [swallower.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 }, requestTimeoutMs });
    const stream = 'liveness-unanswered';
    const rec = record(fleet, [], stream, { client });
    try {
      await waitFor(() => swallower.subscribes >= 1, { timeoutMs: 10_000, message: 'no subscribe reached the proxy' });
      const heldAt = Date.now();
      await waitFor(() => rec.sub.state === 'live', {
        timeoutMs: requestTimeoutMs + 10_000,
        message: 'the held subscribe was never retried',
      });
      const liveAfterMs = Date.now() - heldAt;
      console.log(`unanswered subscribe: live ${liveAfterMs} ms after the first subscribe was held (deadline ${requestTimeoutMs} ms)`);
      expect(swallower.subscribes).toBe(2);
      expect(rec.errors.map((e) => e.code)).toContain('request_timeout');
      await publishSequence(fleet.redis.client(), stream, 0, 50);
      await waitFor(() => rec.seqs.length >= 50, { timeoutMs: 10_000, message: 'no events after the retried subscribe' });
      expect(gapsAndDuplicates(rec.seqs, 0, 50)).toBeNull();
    } finally {
      rec.close();
      await swallower.close();
    }
  });
  it('a client that answers the relay’s pings with WebSocket ping frames is kept: any frame counts', async () => {
    const [relay] = getFleet().relays;
    if (relay === undefined) throw new Error('a relay expected');
    const socket = new WebSocket(relay.url);
    let pings = 0;
    let closed: number | undefined;
    socket.on('message', (data) => {
      if (rawText(data).includes('"op":"ping"')) {
        pings++;
        socket.ping();
      }
    });
    socket.on('close', (code) => (closed = code));
    try {
      // Three relay pings answered only by control frames: an unanswered one closes at the next.
      await waitFor(() => pings >= 3 || closed !== undefined, { timeoutMs: 10 * PING_INTERVAL_MS, message: 'no relay pings' });
      expect(closed).toBeUndefined();
      expect(pings).toBeGreaterThanOrEqual(3);
    } finally {
      socket.close();
    }
  });
});
