import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '@streamgate/client';
import type { SubscriptionError, WebSocketConstructor } from '@streamgate/client';
import { MAX_ENTRY_DATA_BYTES, defineStream } from '@streamgate/protocol';
import type { ServerFrame, StreamId } from '@streamgate/protocol';
import { createPublisher } from '@streamgate/server';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { openRawSocket } from './support/rawSocket.js';
import type { RawSocket } from './support/rawSocket.js';
import { metricValue, useFleet } from './support/startFleet.js';

// Two relays on one Redis: the second is where a client resumes once the first is drained.
const getFleet = useFleet({ relays: 2 });

const FIVE_MIB = 5 * 1024 * 1024;

/** `data` text of a JSON string that is exactly `bytes` long (quotes included). */
const blob = (bytes: number, fill = 'x'): string => JSON.stringify(fill.repeat(bytes - 2));

type EntryFrame = Extract<ServerFrame, { op: 'event' | 'malformed' }>;
const entryFrames = (frames: readonly ServerFrame[]): EntryFrame[] =>
  frames.filter((f): f is EntryFrame => f.op === 'event' || f.op === 'malformed');

/** `ws` counting the sockets a client opens: one more than it started with is one reconnect. */
function countingWebSocket(opened: { count: number }): WebSocketConstructor {
  return class CountingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      opened.count++;
    }
  };
}

/** A raw socket subscribed and live; `isClosed()` says whether the relay (or anyone) closed it since. */
async function openSubscribed(url: string, sid: string, token: string, from?: StreamId): Promise<RawSocket & { isClosed(): boolean }> {
  const socket = await openRawSocket(url);
  let closed = false;
  void socket.closed.then(() => (closed = true));
  socket.send(JSON.stringify({ op: 'subscribe', sid, token, ...(from === undefined ? {} : { from }) }));
  await socket.next((f) => f.op === 'live' && f.sid === sid, 15_000);
  return Object.assign(socket, { isClosed: () => closed });
}

describe('an entry larger than the relay relays', () => {
  it('a 5 MiB entry written by a foreign producer reaches live and resuming subscribers as malformed with its id, one within the limit whole, and nobody is cut or reconnects', async () => {
    const fleet = getFleet();
    const [a, b] = fleet.relays;
    if (a === undefined || b === undefined) throw new Error('two relays expected');
    const stream = 'big-entries';
    const key = `demo:${stream}`;
    const redis = fleet.redis.client();
    const token = async (user: string): Promise<string> => (await fleet.trpc.demo.token.query({ stream, user })).token;

    const live = await openSubscribed(a.url, 'live', await token('alice'));
    // The SDK client: it goes live on A, then is drained to B and resumes there from its position.
    const opened = { count: 0 };
    const client = new RelayClient({ urls: [a.url, b.url], WebSocket: countingWebSocket(opened), backoff: { baseMs: 50, maxMs: 1_000 } });
    const sdkIds: StreamId[] = [];
    const sdkErrors: SubscriptionError[] = [];
    const sub = client.subscribe<unknown>({
      getToken: () => fleet.trpc.demo.token.query({ stream, user: 'carol' }),
      onEvent: (_, meta) => sdkIds.push(meta.id),
      onError: (error) => sdkErrors.push(error),
    });
    const sockets: RawSocket[] = [live];
    try {
      await waitFor(() => sub.state === 'live', { timeoutMs: 15_000, message: 'the SDK client never went live' });
      const before = String(await redis.xadd(key, '*', 'data', '{"n":1}'));
      const huge = String(await redis.xadd(key, '*', 'data', blob(FIVE_MIB)));
      // The largest entry publish writes: relayed whole.
      const fitting = blob(MAX_ENTRY_DATA_BYTES, 'y');
      const fits = String(await redis.xadd(key, '*', 'data', fitting));
      const after = String(await redis.xadd(key, '*', 'data', '{"n":2}'));
      const reason = `field "data" is ${FIVE_MIB} bytes, over this relay's limit of ${MAX_ENTRY_DATA_BYTES} (RELAY_MAX_ENTRY_BYTES)`;
      const expected = [
        { op: 'event', stream: key, id: before, data: { n: 1 } },
        { op: 'malformed', stream: key, id: huge, reason },
        { op: 'event', stream: key, id: fits, data: JSON.parse(fitting) as unknown },
        { op: 'event', stream: key, id: after, data: { n: 2 } },
      ];

      // Live.
      await waitFor(() => entryFrames(live.frames).length >= 4, {
        timeoutMs: 15_000,
        message: 'the live subscriber never got the four entries',
      });
      expect(entryFrames(live.frames)).toEqual(expected);
      expect(live.isClosed()).toBe(false);

      // Across a resume: from the entry before the big one, the catch-up reads it from Redis.
      const resumed = await openSubscribed(b.url, 'back', await token('bob'), before);
      sockets.push(resumed);
      expect(resumed.frames.find((f) => f.op === 'subscribed')).toMatchObject({ recovery: 'recovered', position: before });
      expect(entryFrames(resumed.frames)).toEqual(expected.slice(1));

      // The SDK client skipped the big entry (its id is its position now) and got the rest.
      await waitFor(() => sdkIds.length >= 3, { timeoutMs: 15_000, message: 'the SDK client never got the entries' });
      expect(sdkIds).toEqual([before, fits, after]);
      expect(sdkErrors).toEqual([{ code: 'malformed_entry', retryable: false, message: reason, id: huge }]);
      expect(sub.position).toBe(after);

      // A drain sends the SDK client to B; it resumes after its position, past the big entry.
      expect(a.service.signal('SIGTERM')).toBe(true);
      await withDeadline(a.service.exited, 15_000, 'relay A did not drain and exit');
      await waitFor(() => client.url === b.url && sub.state === 'live', {
        timeoutMs: 15_000,
        message: 'the SDK client did not resume on B',
      });
      const last = String(await redis.xadd(key, '*', 'data', '{"n":3}'));
      await waitFor(() => sdkIds.includes(last) && entryFrames(resumed.frames).some((f) => f.id === last), {
        timeoutMs: 15_000,
        message: 'the entry after the drain did not arrive',
      });
      expect(sdkIds).toEqual([before, fits, after, last]);
      expect(sdkErrors).toHaveLength(1);
      // One socket to A, one to B: the big entry never made it reconnect.
      expect(opened.count).toBe(2);
      // Neither raw socket on B was cut, and B cut nobody.
      expect(entryFrames(resumed.frames).map((f) => f.id)).toEqual([huge, fits, after, last]);
      expect(resumed.isClosed()).toBe(false);
      const metrics = await b.metrics();
      expect(metricValue(metrics, 'streamgate_relay_slow_consumer_cuts_total')).toBe(0);
      expect(metricValue(metrics, 'streamgate_relay_malformed_entries_total')).toBeGreaterThanOrEqual(1);
      // A's live socket was closed by the drain, never before it: it got every entry and the notice.
      expect(live.frames.some((f) => f.op === 'reconnect')).toBe(true);
    } finally {
      client.close();
      for (const s of sockets) s.close();
    }
  });

  it('publish refuses a 5 MiB payload with payload_too_large, naming the limit, and writes nothing', async () => {
    const fleet = getFleet();
    const publisher = createPublisher({ redis: fleet.redis.client() });
    try {
      const result = await publisher.publish(defineStream<string>('demo:too-big'), 'z'.repeat(FIVE_MIB));
      expect(result).toMatchObject({ ok: false, error: { code: 'payload_too_large', retryable: false, limitBytes: MAX_ENTRY_DATA_BYTES } });
      expect(await fleet.redis.client().exists('demo:too-big')).toBe(0);
    } finally {
      await publisher.close();
    }
  });
});
