import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { systemClock } from '@streamgate/protocol';
import { liveChannel } from '@streamgate/redis';
import { IoredisNotifyRedis } from '../../apps/relay/src/redis/IoredisNotifyRedis.js';
import { NotifyReader } from '../../apps/relay/src/redis/NotifyReader.js';
import { StreamChannel } from '../../apps/relay/src/core/StreamChannel.js';
import type { StreamSource } from '../../apps/relay/src/core/StreamSource.js';
import { RelayMetrics } from '../../apps/relay/src/RelayMetrics.js';

// `node --conditions=streamgate-source --import tsx test/bench/livePathCost.ts [streams] [perRead]`:
// the relay's JavaScript cost per entry on the live path, in one process and without sockets or
// Redis: from the pub/sub connection's `messageBuffer` emit (each entry's `xadd` keyspace event,
// then its live message, as ioredis hands them over) through IoredisNotifyRedis, NotifyReader and
// StreamChannel to the publish (a stub: uWS's send and ioredis's RESP decoding are not in it).
// `perRead` entries arrive per turn of the event loop, as per socket read at a high rate. Prints
// CPU µs per entry (user + system of this process, best and median of 9 rounds): an A/B loop for
// the live path that the load generator's noise does not drown; run it pinned (`taskset -c 0`),
// with `--cpu-prof` to see where the time goes.

const streams = Number(process.argv[2] ?? 10_000);
const perRead = Number(process.argv[3] ?? 200);
const ROUNDS = 9;
const ENTRIES_PER_ROUND = 5 * streams;

const idle = (): Promise<unknown> => Promise.resolve(0);
const subscriber = Object.assign(new EventEmitter(), {
  status: 'ready',
  subscribe: idle,
  unsubscribe: idle,
  ping: idle,
  disconnect: () => undefined,
});
// Each key's first read, once its channels are confirmed, finds nothing.
const reader = Object.assign(new EventEmitter(), { status: 'ready', callBuffer: () => Promise.resolve(null), disconnect: () => undefined });
const redis = new IoredisNotifyRedis({
  subscriber: subscriber as unknown as Redis,
  reader: reader as unknown as Redis,
  db: 0,
  count: 100,
  onPingError: (error) => console.error(error),
});
const metrics = new RelayMetrics();
let published = 0;
const publisher = { publish: () => void published++, subscriberCount: () => 1 };
const source = {
  inspect: () => Promise.resolve({ ok: true, value: { info: null } }),
  watch: () => undefined,
  unwatch: () => undefined,
} as unknown as StreamSource;

const names = Array.from({ length: streams }, (_, i) => `bench:task:{${i}}`);
const channels = new Map<string, StreamChannel>();
for (const stream of names) {
  const options = { source, publisher, metrics: metrics.hub, topic: stream, catchUpPageSize: 100, clock: systemClock };
  channels.set(
    stream,
    new StreamChannel(stream, { ...options, maxBufferedBytes: 1 << 20, maxPendingCatchUpBytes: 1 << 20, onEnd: () => undefined }),
  );
}
await Promise.all([...channels.values()].map((channel) => channel.ready));
const fail = (what: string) => () => {
  throw new Error(`unexpected ${what} on the live path`);
};
const notify = new NotifyReader(
  {
    redis,
    clock: systemClock,
    count: 100,
    sweepIntervalMs: 3_600_000,
    onEntries: (stream, entries) => channels.get(stream)?.publish(entries),
    onWrongType: () => Promise.resolve([]),
    onSuspect: fail('suspect'),
    onError: (error) => console.error(error),
    onRead: () => undefined,
  },
  names.map((stream) => [stream, '0-0'] as const),
);
const turn = () => new Promise((resolve) => setImmediate(resolve));
// The subscribes confirm and every key's first read is done.
await new Promise((resolve) => setTimeout(resolve, 500));

const keyspace = names.map((stream) => Buffer.from(`__keyspace@0__:${stream}`));
const live = names.map((stream) => Buffer.from(liveChannel(stream, 0) ?? ''));
const xadd = Buffer.from('xadd');
const last = names.map(() => '0-0');
let ms = 1_764_650_000_000;

async function oneEntryPerStream(): Promise<void> {
  ms++;
  for (let i = 0; i < streams; i++) {
    const id = `${ms}-${i}`;
    const payload = `{"seq":${i},"t":${ms}.123,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`;
    subscriber.emit('messageBuffer', keyspace[i], xadd);
    subscriber.emit('messageBuffer', live[i], Buffer.from(`${last[i]} ${id} ${payload}`));
    last[i] = id;
    if (i % perRead === perRead - 1) await turn();
  }
}

await oneEntryPerStream();
const perEntry: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  published = 0;
  const before = process.cpuUsage();
  for (let k = 0; k < ENTRIES_PER_ROUND / streams; k++) await oneEntryPerStream();
  // The pairing check's timer runs out inside the round.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const used = process.cpuUsage(before);
  if (published !== ENTRIES_PER_ROUND) throw new Error(`published ${published} of ${ENTRIES_PER_ROUND}`);
  perEntry.push((used.user + used.system) / ENTRIES_PER_ROUND);
}
perEntry.sort((a, b) => a - b);
const best = perEntry[0] ?? NaN;
const median = perEntry[Math.floor(ROUNDS / 2)] ?? NaN;
console.log(
  `live path, ${streams} streams, ${perRead} entries per read: CPU ${best.toFixed(2)} µs/entry best, ${median.toFixed(2)} median`,
);
await notify.close();
// The metrics' and reader's timers would keep the process up.
process.exit(0);
