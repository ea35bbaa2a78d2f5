import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { parseJoin } from './parseJoin.js';

// Peer 2: the relay a user would write by hand: `ws` plus ioredis, one blocking XREAD loop per
// stream (each on its own connection), every entry's data sent to each subscriber of the stream.

const env = z.object({ BENCH_REDIS_URL: z.string().url(), BENCH_PORT: z.coerce.number().int().default(0) }).parse(process.env);
const rooms = new Map<string, Set<WebSocket>>();

async function readLoop(stream: string): Promise<void> {
  const redis = new Redis(env.BENCH_REDIS_URL, { maxRetriesPerRequest: null });
  let last = '$';
  for (;;) {
    const reply = await redis.xread('BLOCK', 5_000, 'STREAMS', stream, last);
    if (reply === null) continue;
    for (const [, entries] of reply) {
      for (const [id, fields] of entries) {
        last = id;
        const data = fields[1];
        if (data === undefined) continue;
        for (const ws of rooms.get(stream) ?? []) ws.send(data);
      }
    }
  }
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: env.BENCH_PORT, perMessageDeflate: false });
wss.on('connection', (ws) => {
  const joined: string[] = [];
  ws.on('message', (raw: Buffer) => {
    const stream = parseJoin(raw.toString('utf8'));
    if (stream === null) return;
    let room = rooms.get(stream);
    if (room === undefined) {
      room = new Set();
      rooms.set(stream, room);
      readLoop(stream).catch((error: unknown) => process.stderr.write(`read loop ${stream}: ${String(error)}\n`));
    }
    room.add(ws);
    joined.push(stream);
    ws.send(JSON.stringify({ joined: stream }));
  });
  ws.on('close', () => {
    for (const stream of joined) rooms.get(stream)?.delete(ws);
  });
});
wss.on('listening', () => {
  const address = wss.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
});
