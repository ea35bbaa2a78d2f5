import { Cluster, Redis } from 'ioredis';
import { parseRedisTarget } from '@streamgate/protocol';
import { Server } from 'socket.io';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import WebSocket from 'ws';
import { createPublisher as createStreamgatePublisher } from '@streamgate/server';
import type { StreamRef } from '@streamgate/server';
import type { RedisClient } from '@streamgate/redis';
import { withDeadline } from '@streamgate/testkit';
import type { Histogram } from 'hdr-histogram-js';
import type { ServerKind } from './loadgen/protocols.js';
import { newLatencyHistogram } from './latencyHistogram.js';
import { nowMs } from './openLoop.js';

/** Writes one event for `stream`; how depends on the server under test. */
export interface Publisher {
  publish(stream: string, seq: number, intendedMs: number): void;
  /** Sends what was queued in this tick. */
  flush(): void;
  /** The server was restarted on another port (only the uWS ceiling is published to directly). */
  retarget(port: number): void;
  /**
   * The writes acknowledged since the last call, each from its intended send time to the moment
   * the publisher handled its reply (µs), and starts over; absent for a publisher whose writes have
   * no reply of their own. The write side's share of a delivery's latency, and a little more: the
   * publisher's own delay in handling the reply is in it, not in the delivery.
   */
  takeWriteLatency?(): Histogram;
  close(): Promise<void>;
}

// About 100 bytes per event, like a small product event.
const PADDING = 'x'.repeat(48);

export function payloadText(seq: number, intendedMs: number): string {
  return `{"q":${seq},"t":${intendedMs.toFixed(3)},"p":"${PADDING}"}`;
}

/** The same event as an object, for writers that serialize it themselves (its JSON is payloadText's). */
export interface BenchPayload {
  readonly q: number;
  readonly t: number;
  readonly p: string;
}

export function payloadOf(seq: number, intendedMs: number): BenchPayload {
  return { q: seq, t: Number(intendedMs.toFixed(3)), p: PADDING };
}

/**
 * The relay is written to by streamgate's own publisher (`createPublisher` from
 * @streamgate/server), as a product team would, so that whatever its write does for the relay
 * (the entry travelling with its write) is what the bench measures. The client it is given
 * auto-pipelines, as a team's might; the publisher's own connection, duplicated from it, does not
 * (its batcher sends one script per tick, as the ws relay's writer sends one pipeline per tick).
 */
function streamgatePublisher(redisUrl: string): Publisher {
  const address = parseRedisTarget(redisUrl);
  const template: RedisClient =
    address?.kind === 'cluster'
      ? new Cluster([{ host: address.host, port: address.port }], { enableAutoPipelining: true, lazyConnect: true })
      : new Redis(redisUrl, { enableAutoPipelining: true, lazyConnect: true });
  const publisher = createStreamgatePublisher({ redis: template, maxLen: 10_000 });
  const refs = new Map<string, StreamRef<BenchPayload>>();
  let failures = 0;
  // Microseconds, as the load clients' delivery histograms.
  let writes = newLatencyHistogram();
  const refOf = (stream: string): StreamRef<BenchPayload> => {
    const known = refs.get(stream);
    if (known !== undefined) return known;
    // No schema: the bench's payload is its own, and the relay must not pay for checking it.
    const ref: StreamRef<BenchPayload> = { name: stream, schema: undefined };
    refs.set(stream, ref);
    return ref;
  };
  return {
    publish(stream, seq, intendedMs) {
      void publisher.publish(refOf(stream), payloadOf(seq, intendedMs)).then((result) => {
        writes.recordValue(Math.max(1, Math.round((nowMs() - intendedMs) * 1000)));
        // Counted, and the first few told: a lost write shows up as undelivered in the step.
        if (!result.ok && failures++ < 5) process.stderr.write(`publisher: ${result.error.code}: ${result.error.message}\n`);
      });
    },
    flush() {
      // Auto-pipelining sends what this tick queued.
    },
    retarget() {
      // Redis did not move.
    },
    takeWriteLatency() {
      const taken = writes;
      writes = newLatencyHistogram();
      return taken;
    },
    async close() {
      await publisher.close();
      template.disconnect();
    },
  };
}

/**
 * The hand-written ws relay's writer: plain XADDs, pipelined per tick, as a team without
 * streamgate would write them.
 */
function xaddPublisher(redisUrl: string): Publisher {
  const address = parseRedisTarget(redisUrl);
  if (address?.kind === 'cluster') return clusterXaddPublisher(address.host, address.port);
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
function clusterXaddPublisher(host: string, port: number): Publisher {
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
      io.to(stream).emit('e', payloadOf(seq, intendedMs));
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
    case 'uwsfloor':
      // The floor reads what createPublisher publishes, as the relay does.
      return streamgatePublisher(redisUrl);
    case 'wsrelay':
      return xaddPublisher(redisUrl);
    case 'socketio':
      return socketioPublisher(redisUrl);
    case 'uws':
      return uwsPublisher(port);
  }
}
