import { Cluster, Redis } from 'ioredis';
import { parseRedisTarget } from '@streamgate/protocol';
import { Server } from 'socket.io';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import WebSocket from 'ws';
import { withDeadline } from '@streamgate/testkit';
import type { ServerKind } from './loadgen/protocols.js';

/** Writes one event for `stream`; how depends on the server under test. */
export interface Publisher {
  publish(stream: string, seq: number, intendedMs: number): void;
  /** Sends what was queued in this tick. */
  flush(): void;
  /** The server was restarted on another port (only the uWS ceiling is published to directly). */
  retarget(port: number): void;
  close(): Promise<void>;
}

// About 100 bytes per event, like a small product event.
const PADDING = 'x'.repeat(48);

export function payloadText(seq: number, intendedMs: number): string {
  return `{"q":${seq},"t":${intendedMs.toFixed(3)},"p":"${PADDING}"}`;
}

/**
 * The relay and the hand-written ws relay read Redis streams: the publisher XADDs (pipelined per
 * tick) exactly as streamgate's own publisher does.
 */
function redisPublisher(redisUrl: string): Publisher {
  const address = parseRedisTarget(redisUrl);
  if (address?.kind === 'cluster') return clusterPublisher(address.host, address.port);
  const redis = new Redis(redisUrl);
  let pipeline = redis.pipeline();
  let queued = 0;
  return {
    publish(stream, seq, intendedMs) {
      pipeline.xadd(stream, 'MAXLEN', '~', 10_000, '*', 'data', payloadText(seq, intendedMs));
      queued++;
    },
    flush() {
      if (queued === 0) return;
      pipeline.exec().catch((error: unknown) => process.stderr.write(`publisher: ${String(error)}\n`));
      pipeline = redis.pipeline();
      queued = 0;
    },
    retarget() {
      // Redis did not move.
    },
    async close() {
      await redis.quit();
    },
  };
}

/**
 * On a Redis Cluster a pipeline must stay on one node: each XADD is sent on its own and ioredis's
 * auto-pipelining batches those of one tick per node, which is what the per-tick pipeline above
 * does on one Redis.
 */
function clusterPublisher(host: string, port: number): Publisher {
  const cluster = new Cluster([{ host, port }], { enableAutoPipelining: true });
  return {
    publish(stream, seq, intendedMs) {
      cluster
        .xadd(stream, 'MAXLEN', '~', 10_000, '*', 'data', payloadText(seq, intendedMs))
        .catch((error: unknown) => process.stderr.write(`publisher: ${String(error)}\n`));
    },
    flush() {
      // Auto-pipelining sends what this tick queued.
    },
    retarget() {
      // Redis did not move.
    },
    async close() {
      await cluster.quit();
    },
  };
}

/** Socket.IO: a backend process emits to the room through the Redis streams adapter. */
function socketioPublisher(redisUrl: string): Publisher {
  const redis = new Redis(redisUrl);
  const io = new Server({ adapter: createAdapter(redis) });
  return {
    publish(stream, seq, intendedMs) {
      io.to(stream).emit('e', { q: seq, t: Number(intendedMs.toFixed(3)), p: PADDING });
    },
    flush() {
      // The adapter writes each emit itself.
    },
    retarget() {
      // Redis did not move.
    },
    async close() {
      // A server that never listened has no engine to close: close its adapter (and the adapter's reader).
      await Promise.resolve(io.of('/').adapter.close());
      redis.disconnect();
    },
  };
}

/** The uWS ceiling has no Redis: the publisher's own socket hands each event to app.publish. */
async function uwsPublisher(initialPort: number): Promise<Publisher> {
  let port = initialPort;
  let ws: WebSocket | null = null;
  let closed = false;
  let batch: string[] = [];
  let firstOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (firstOpen = resolve));
  const open = (): void => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/publish`, { perMessageDeflate: false });
    socket.on('open', () => {
      ws = socket;
      firstOpen();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      ws = null;
      // Events published while the server is down are lost, as they would be without Redis.
      if (!closed) setTimeout(open, 50);
    });
  };
  open();
  await withDeadline(opened, 10_000, 'the uWS publisher socket never opened');
  return {
    publish(stream, seq, intendedMs) {
      batch.push(`P${stream}\n${payloadText(seq, intendedMs)}`);
    },
    flush() {
      const socket = ws;
      if (socket !== null) for (const text of batch) socket.send(text);
      batch = [];
    },
    retarget(newPort) {
      port = newPort;
    },
    async close() {
      closed = true;
      ws?.close();
      await Promise.resolve();
    },
  };
}

export async function createPublisher(kind: ServerKind, redisUrl: string, port: number): Promise<Publisher> {
  switch (kind) {
    case 'relay':
    case 'wsrelay':
      return redisPublisher(redisUrl);
    case 'socketio':
      return socketioPublisher(redisUrl);
    case 'uws':
      return uwsPublisher(port);
  }
}
