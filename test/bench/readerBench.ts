import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedis, tsxLoaderUrl } from '@streamgate/testkit';
import { IoredisReaderRedis } from '../../apps/relay/src/redis/IoredisReaderRedis.js';
import { RedisBatchReader } from '../../apps/relay/src/redis/RedisBatchReader.js';
import { systemClock } from '@streamgate/protocol';
import { cpuSeconds } from './procStats.js';

// `node --conditions=streamgate-source --import tsx test/bench/readerBench.ts [streams] [events/s] [seconds]`:
// the relay's batched XREAD reader alone, without sockets: reads/s, entries per read, and CPU of
// this process (the reader; the writer runs in a child) and of Redis per entry read. A quick loop
// for changes to RedisBatchReader, where the many-stream workloads spend their time.

const [streamsArg, rateArg, secondsArg, urlArg] = process.argv.slice(2);

if (process.env.READER_BENCH_WRITER === '1') {
  // The writer: XADD round-robin over the streams at a fixed rate, pipelined per millisecond.
  const streams = Number(streamsArg);
  const rate = Number(rateArg);
  const redis = new Redis(urlArg ?? '');
  const start = performance.now();
  let k = 0;
  const tick = (): void => {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    const p = redis.pipeline();
    for (; k < due; k++) p.xadd(`rb:${k % streams}`, 'MAXLEN', '~', 1000, '*', 'data', `{"q":${k}}`);
    void p.exec();
    setTimeout(tick, 1);
  };
  tick();
} else {
  const streams = Number(streamsArg ?? 1000);
  const rate = Number(rateArg ?? 1000);
  const seconds = Number(secondsArg ?? 5);
  const redis = await startRedis();
  const redisPid = redis.service?.pid ?? 0;
  const cmd = new Redis(redis.url, { protocol: 2 });
  for (let s = 0; s < streams; s++) await cmd.xadd(`rb:${s}`, '*', 'data', '{}');
  let reads = 0;
  let entries = 0;
  let measuring = false;
  const delays: number[] = [];
  const reader = new RedisBatchReader({
    redis: new IoredisReaderRedis({
      connection: new Redis(redis.url, { protocol: 2, maxRetriesPerRequest: null, autoResendUnfulfilledCommands: false }),
      unblock: async (id) => (await cmd.call('CLIENT', ['UNBLOCK', id, 'TIMEOUT'])) === 1,
      blockMs: 5_000,
      count: 1_000,
    }),
    clock: systemClock,
    onEntries: (_stream, e) => {
      entries += e.length;
      // The writer's XADD * ids carry Redis's clock in ms: the delay from write to read, to 1 ms.
      const now = Date.now();
      for (const entry of e) if (measuring) delays.push(now - Number(entry.id.slice(0, entry.id.indexOf('-'))));
    },
    onWrongType: () => Promise.resolve([]),
    onError: (error) => process.stderr.write(`${error.message}\n`),
    onRead: () => reads++,
  });
  for (let s = 0; s < streams; s++) reader.add(`rb:${s}`, `${Date.now()}-0`);
  const writer = fork(fileURLToPath(import.meta.url), [String(streams), String(rate), '0', redis.url], {
    execArgv: ['--conditions=streamgate-source', '--import', tsxLoaderUrl()],
    env: { ...process.env, READER_BENCH_WRITER: '1' },
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const r0 = reads;
  const e0 = entries;
  const c0 = process.cpuUsage();
  const redis0 = cpuSeconds(redisPid);
  const t0 = performance.now();
  measuring = true;
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const wall = (performance.now() - t0) / 1000;
  measuring = false;
  delays.sort((a, b) => a - b);
  const pct = (p: number): number => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))] ?? 0;
  const c = process.cpuUsage(c0);
  const readerCpu = (c.user + c.system) / 1e6;
  const redisCpu = cpuSeconds(redisPid) - redis0;
  const n = entries - e0;
  const rd = reads - r0;
  process.stdout.write(
    `${streams} streams, ${rate} events/s: ${(rd / wall).toFixed(0)} reads/s, ${(n / Math.max(1, rd)).toFixed(1)} entries/read, ` +
      `reader ${((100 * readerCpu) / wall).toFixed(0)}% (user ${((100 * c.user) / 1e6 / wall).toFixed(0)}%, ${((readerCpu * 1e6) / Math.max(1, n)).toFixed(1)} µs/entry, ${((readerCpu * 1e6) / Math.max(1, rd)).toFixed(0)} µs/read), ` +
      `redis ${((100 * redisCpu) / wall).toFixed(0)}% (${((redisCpu * 1e6) / Math.max(1, n)).toFixed(1)} µs/entry, ${((redisCpu * 1e6) / Math.max(1, rd)).toFixed(0)} µs/read); ` +
      `write→read p50 ${pct(50)} ms, p99 ${pct(99)} ms\n`,
  );
  writer.kill();
  await reader.close();
  cmd.disconnect();
  await redis.stop();
  process.exit(0);
}
