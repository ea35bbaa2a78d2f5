import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import { z } from 'zod';

// Peer 1: what a user would pick instead: Socket.IO 4 with its Redis streams adapter, WebSocket
// transport only, adapter defaults. A client joins a room per stream; the publisher emits to the
// room from another process through the adapter, as a product backend would.

const env = z.object({ BENCH_REDIS_URL: z.string().url(), BENCH_PORT: z.coerce.number().int().default(0) }).parse(process.env);
const redis = new Redis(env.BENCH_REDIS_URL);
const http = createServer();
const io = new Server(http, { transports: ['websocket'], serveClient: false, adapter: createAdapter(redis) });

io.on('connection', (socket) => {
  socket.on('join', (stream: unknown) => {
    if (typeof stream !== 'string') return;
    void socket.join(stream);
    socket.emit('joined', stream);
  });
});

http.listen(env.BENCH_PORT, '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const o = io.engine.opts;
  const defaults = {
    pingInterval: o.pingInterval,
    pingTimeout: o.pingTimeout,
    maxHttpBufferSize: o.maxHttpBufferSize,
    perMessageDeflate: o.perMessageDeflate,
  };
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port, defaults })}\n`);
});
