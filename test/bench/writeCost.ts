/**
 * What one entry's write costs Redis, by how it is written and who listens: `node
 * --conditions=streamgate-source --import tsx test/bench/writeCost.ts`. Each variant writes
 * WRITE_COST_ENTRIES entries round-robin over WRITE_COST_STREAMS streams at WRITE_COST_RATE/s
 * into a fresh redis-server, with a subscriber holding the channels a relay would, and reports
 * Redis CPU (`INFO cpu`) and `INFO commandstats` per entry. No relay runs: this is the write side
 * alone, the part of the task bench's Redis CPU per entry that no reader change can cut.
 */
import { Redis } from 'ioredis';
import { createPublisher } from '@streamgate/server';
import type { StreamRef } from '@streamgate/server';
import { liveChannel } from '@streamgate/redis';
import { startRedis } from '@streamgate/testkit';
import { commandCostPerEntry, fmtCommandCosts, parseCommandStats } from './commandStats.js';
import { payloadOf, payloadText } from './Publisher.js';
import type { BenchPayload } from './Publisher.js';

const STREAMS = Number(process.env.WRITE_COST_STREAMS ?? 10_000);
const ENTRIES = Number(process.env.WRITE_COST_ENTRIES ?? 50_000);
const RATE = Number(process.env.WRITE_COST_RATE ?? 10_000);

interface Variant {
  readonly name: string;
  readonly notify: boolean;
  /** Channels the subscriber holds per stream. */
  readonly listen: 'none' | 'live' | 'keyspace' | 'both';
  readonly writer: 'publisher' | 'xadd' | 'one-stream';
}

const VARIANTS: readonly Variant[] = [
  { name: 'XADD, one stream (Socket.IO adapter)', notify: false, listen: 'none', writer: 'one-stream' },
  { name: 'XADD', notify: false, listen: 'none', writer: 'xadd' },
  { name: 'XADD, Kt, keyspace subscribed', notify: true, listen: 'keyspace', writer: 'xadd' },
  { name: 'createPublisher', notify: false, listen: 'none', writer: 'publisher' },
  { name: 'createPublisher, live subscribed', notify: false, listen: 'live', writer: 'publisher' },
  { name: 'createPublisher, Kt, both subscribed', notify: true, listen: 'both', writer: 'publisher' },
];

const streamName = (i: number): string => `task:${i}`;

async function redisCpuSeconds(client: Redis): Promise<number> {
  const text = await client.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(text)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function measure(v: Variant): Promise<string> {
  const redis = await startRedis({ args: v.notify ? ['--notify-keyspace-events', 'Kt'] : [] });
  const admin = redis.client();
  const subscriber = redis.client();
  const writer = new Redis(redis.url, { enableAutoPipelining: true });
  const publisher = createPublisher({ redis: writer, maxLen: 10_000 });
  try {
    let messages = 0;
    subscriber.on('message', () => messages++);
    const channels: string[] = [];
    for (let i = 0; i < STREAMS; i++) {
      if (v.listen === 'live' || v.listen === 'both') channels.push(liveChannel(streamName(i), 0) ?? '');
      if (v.listen === 'keyspace' || v.listen === 'both') channels.push(`__keyspace@0__:${streamName(i)}`);
    }
    for (let i = 0; i < channels.length; i += 500) await subscriber.subscribe(...channels.slice(i, i + 500));
    const refs = Array.from({ length: STREAMS }, (_, i): StreamRef<BenchPayload> => ({ name: streamName(i), schema: undefined }));
    const write = (seq: number): Promise<unknown> => {
      const stream = streamName(seq % STREAMS);
      const data = payloadText(seq, performance.now());
      if (v.writer === 'publisher')
        return publisher.publish(refs[seq % STREAMS] as StreamRef<BenchPayload>, payloadOf(seq, performance.now()));
      if (v.writer === 'one-stream') return writer.xadd('socket.io', 'MAXLEN', '~', 10_000, '*', 'data', data);
      return writer.xadd(stream, 'MAXLEN', '~', 10_000, '*', 'data', data);
    };
    // Warm-up: the script loaded, every stream created.
    await Promise.all(Array.from({ length: STREAMS }, (_, i) => write(i)));
    const statsBefore = parseCommandStats(await admin.info('commandstats'));
    const cpuBefore = await redisCpuSeconds(admin);
    const started = performance.now();
    const pending: Promise<unknown>[] = [];
    let sent = 0;
    while (sent < ENTRIES) {
      const due = Math.min(ENTRIES, Math.floor(((performance.now() - started) / 1000) * RATE));
      for (; sent < due; sent++) pending.push(write(STREAMS + sent));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
    const cpu = (await redisCpuSeconds(admin)) - cpuBefore;
    const rows = commandCostPerEntry(statsBefore, parseCommandStats(await admin.info('commandstats')), ENTRIES);
    const commandUs = rows.filter((r) => !['eval', 'evalsha'].includes(r.command)).reduce((a, r) => a + r.usPerEntry, 0);
    const scriptUs = rows.filter((r) => ['eval', 'evalsha'].includes(r.command)).reduce((a, r) => a + r.usPerEntry, 0);
    return (
      `${v.name}: Redis CPU ${((cpu * 1e6) / ENTRIES).toFixed(2)} µs/entry (commands ${commandUs.toFixed(2)}, scripts ${scriptUs.toFixed(2)} incl. their commands), ` +
      `${(messages / ENTRIES).toFixed(2)} messages/entry\n    ${fmtCommandCosts(rows)}`
    );
  } finally {
    await publisher.close();
    writer.disconnect();
    subscriber.disconnect();
    admin.disconnect();
    await redis.stop();
  }
}

const only = process.env.WRITE_COST_VARIANTS?.split(',').map(Number);
for (const [i, v] of VARIANTS.entries()) {
  if (only !== undefined && !only.includes(i)) continue;
  process.stdout.write(`${await measure(v)}\n`);
}
process.exit(0);
