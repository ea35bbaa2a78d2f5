import { z } from 'zod';
import { loadUws } from '../../../apps/relay/src/edge/loadUws.js';
import { parseJoin } from './parseJoin.js';
import { redisFeed } from './uwsRedisFeed.js';

// The build the relay loads on this Node (native on 20, 22 and 24), so that the ceiling and the
// relay are the same uWS: the test package's own uWebSockets.js is the Node 20 build, which on
// Node 24 falls back to a shim that is no ceiling.
const uWS = loadUws().uws;

// The ceiling: uWebSockets.js pub/sub with no Redis. A client joins a topic per stream; the
// publisher's own socket sends `P<stream>\n<payload>` and the server publishes the payload.
// With BENCH_UWS_FEED=redis it is the floor of the relay's live path instead (uwsRedisFeed.ts):
// entries come from each joined stream's live channel, as createPublisher publishes them.

interface Data {
  readonly publisher: boolean;
}

const env = z
  .object({
    BENCH_PORT: z.coerce.number().int().default(0),
    BENCH_REDIS_URL: z.string().url().optional(),
    BENCH_UWS_FEED: z.enum(['publisher', 'redis']).default('publisher'),
  })
  .parse(process.env);
const app = uWS.App();
const feed =
  env.BENCH_UWS_FEED === 'redis'
    ? redisFeed(z.string().parse(env.BENCH_REDIS_URL), (topic, value) => {
        app.publish(topic, value, false);
      })
    : null;
app.ws<Data>('/*', {
  maxPayloadLength: 1 << 20,
  maxBackpressure: 1 << 20,
  closeOnBackpressureLimit: true,
  idleTimeout: 60,
  message: (ws, message) => {
    const text = Buffer.from(message).toString('utf8');
    if (text.startsWith('P')) {
      const nl = text.indexOf('\n');
      app.publish(text.slice(1, nl), text.slice(nl + 1), false);
      return;
    }
    const stream = parseJoin(text);
    if (stream === null) return;
    ws.subscribe(stream);
    if (feed === null) {
      ws.send(JSON.stringify({ joined: stream }), false);
      return;
    }
    feed.watch(stream).then(
      () => ws.send(JSON.stringify({ joined: stream }), false),
      (error: unknown) => process.stderr.write(`uws floor: ${String(error)}\n`),
    );
  },
});
app.listen('127.0.0.1', env.BENCH_PORT, (socket) => {
  if (socket === false) throw new Error('uws ceiling: could not listen');
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: uWS.us_socket_local_port(socket) })}\n`);
});
