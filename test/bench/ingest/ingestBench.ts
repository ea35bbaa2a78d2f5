/**
 * Ingest benchmark (not a test): real redis-server, real anvil, fault proxies, a real ingest
 * worker process. Every figure is printed next to a peer measured in the same run:
 *   - failover latency (cut the live provider, mine a block, time until the block is in the
 *     stream) against the same measurement with no failover (steady push latency);
 *   - write-step cost per event (fence + dedupe + XADD + checkpoint, one Lua call) against a bare
 *     XADD of the same payload, single events and 100-event batches, plus the duplicate path;
 *   - events written per second by one worker while backfilling over HTTP, against the rate at
 *     which the same HTTP endpoint serves eth_getBlockByNumber at the same concurrency.
 * Run: node --conditions=streamgate-source --import tsx test/bench/ingest/ingestBench.ts [failovers]
 */
import { Redis } from 'ioredis';
import { RedisLeaseStore, RedisStreamWriter } from '@streamgate/ingest-core/redis';
import { spawnIngest, startAnvil, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import { FAST_WORKER_ENV, assertExactBlocks, holdDemand, testChain } from '../../support/ingestHarness.js';

const FAILOVERS = Number(process.argv[2] ?? 50);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (n: number) => n.toFixed(1);

async function lastBlock(redis: Redis, stream: string): Promise<number> {
  const [entry] = await redis.xrevrange(stream, '+', '-', 'COUNT', 1);
  if (entry === undefined) return -1;
  const data = entry[1][entry[1].indexOf('data') + 1] ?? '{}';
  return (JSON.parse(data) as { number?: number }).number ?? -1;
}

async function timeUntilWritten(redis: Redis, stream: string, block: number, t0: number): Promise<number> {
  await waitFor(async () => (await lastBlock(redis, stream)) >= block, {
    timeoutMs: 30_000,
    intervalMs: 2,
    message: `block ${block} written`,
  });
  return performance.now() - t0;
}

const redisServer = await startRedis();
const anvil = await startAnvil();
const proxies = [await startFaultProxy(anvil), await startFaultProxy(anvil)];
const redis = redisServer.client();
const STREAM = 'bench:heads';
const worker = await spawnIngest({
  name: 'bench-worker',
  redisUrl: redisServer.url,
  topology: {
    chains: { anvil: testChain(proxies, { maxFailovers: 100, failoverWindowMs: 1_000, maxBackfillBlocks: 5_000, headPollMs: 200 }) },
    streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }],
  },
  env: FAST_WORKER_ENV,
});
const demand = holdDemand(redis, [STREAM]);
try {
  await waitFor(async () => (await lastBlock(redis, STREAM)) >= 0, { timeoutMs: 20_000, message: 'stream anchored' });

  // Peer: a block's way from anvil to the stream with nothing failing.
  const steady: number[] = [];
  for (let i = 0; i < FAILOVERS; i++) {
    const t0 = performance.now();
    const n = await anvil.mine(1);
    steady.push(await timeUntilWritten(redis, STREAM, n, t0));
  }
  // Forced failovers: the live provider's sockets are cut and it refuses new ones; a block is
  // mined at once; the figure is until that block is in the stream.
  const failover: number[] = [];
  for (let i = 0; i < FAILOVERS; i++) {
    const active = proxies.find((p) => p.openSockets > 0);
    if (active === undefined) throw new Error('no live upstream socket');
    const t0 = performance.now();
    active.setMode('down');
    const n = await anvil.mine(1);
    failover.push(await timeUntilWritten(redis, STREAM, n, t0));
    active.setMode('pass');
    await waitFor(() => proxies.some((p) => p.openSockets > 0), { timeoutMs: 10_000, message: 'a live upstream socket again' });
  }
  const head = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
  await waitFor(async () => (await lastBlock(redis, STREAM)) >= head, { timeoutMs: 10_000, message: 'settled' });
  const checked = await assertExactBlocks(redis, anvil, STREAM, head);

  // Backfill throughput: the worker is stopped, blocks pile up, a new worker catches up.
  await worker.service.stop();
  const BACKLOG = 2_000;
  await anvil.rpc('anvil_mine', [`0x${BACKLOG.toString(16)}`]);
  const target = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
  const t0 = performance.now();
  const second = await spawnIngest({
    name: 'bench-worker-2',
    redisUrl: redisServer.url,
    topology: {
      chains: { anvil: testChain(proxies, { maxBackfillBlocks: 5_000, headPollMs: 200 }) },
      streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }],
    },
    env: FAST_WORKER_ENV,
  });
  await waitFor(async () => (await lastBlock(redis, STREAM)) >= target, { timeoutMs: 300_000, intervalMs: 20, message: 'backfilled' });
  const backfillMs = performance.now() - t0;
  await second.service.stop();
  await assertExactBlocks(redis, anvil, STREAM, target);
  // Peer: the same endpoint's eth_getBlockByNumber rate at the worker's concurrency (8).
  const httpUrl = proxies[0]?.httpUrl ?? '';
  const p0 = performance.now();
  for (let n = target - BACKLOG + 1; n <= target; n += 8) {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(httpUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: [`0x${(n + i).toString(16)}`, false] }),
        }).then((r) => r.text()),
      ),
    );
  }
  const fetchMs = performance.now() - p0;

  // Write step against a bare XADD, same Redis, same payload.
  const payload = JSON.stringify({
    type: 'block',
    chain: 'bench',
    number: 1,
    hash: `0x${'ab'.repeat(32)}`,
    parentHash: `0x${'cd'.repeat(32)}`,
    timestamp: 1,
    header: { miner: `0x${'00'.repeat(20)}` },
  });
  const writerRedis = new Redis(redisServer.url);
  const writer = new RedisStreamWriter({ redis: writerRedis, keyPrefix: 'bench:', dedupeTtlMs: 3_600_000, maxLen: 0 });
  const lease = await new RedisLeaseStore(writerRedis, 'bench:').acquire('w', 'bench', 600_000);
  if (lease === null) throw new Error('no lease');
  const fence = { key: 'w', token: lease.token };
  const N = 20_000;
  const timeIt = async (fn: (i: number) => Promise<unknown>, count: number) => {
    const s = performance.now();
    for (let i = 0; i < count; i++) await fn(i);
    return (performance.now() - s) / count;
  };
  const xaddOne = await timeIt(() => writerRedis.xadd('bare', '*', 'data', payload), N);
  const writeOne = await timeIt(
    (i) => writer.write(fence, { entries: [{ dedupeId: `e${i}`, data: payload }], stateSet: { cp: String(i) } }),
    N,
  );
  const dupOne = await timeIt(
    (i) => writer.write(fence, { entries: [{ dedupeId: `e${i}`, data: payload }], stateSet: { cp: String(i) } }),
    N,
  );
  const B = 100;
  const xaddBatch =
    (await timeIt(async () => {
      const p = writerRedis.pipeline();
      for (let j = 0; j < B; j++) p.xadd('bare', '*', 'data', payload);
      await p.exec();
    }, N / B)) / B;
  const writeBatch =
    (await timeIt(
      (i) =>
        writer.write(fence, {
          entries: Array.from({ length: B }, (_, j) => ({ dedupeId: `b${i}:${j}`, data: payload })),
          stateSet: { cp: String(i) },
        }),
      N / B,
    )) / B;
  writerRedis.disconnect();

  const fo = { p50: pct(failover, 50), p99: pct(failover, 99) };
  const st = { p50: pct(steady, 50), p99: pct(steady, 99) };
  console.log(`ingest benchmark — ${FAILOVERS} forced failovers, ${checked.count} blocks checked against the node (0 gaps, 0 duplicates)`);
  console.log(`failover latency (cut → next block in stream): p50 ${fmt(fo.p50)} ms, p99 ${fmt(fo.p99)} ms`);
  console.log(`  peer, steady push (mine → block in stream):    p50 ${fmt(st.p50)} ms, p99 ${fmt(st.p99)} ms`);
  console.log(`  ratio failover/steady: p50 ${fmt(fo.p50 / st.p50)}x, p99 ${fmt(fo.p99 / st.p99)}x`);
  console.log(
    `write step per event, 1 per call: ${fmt(writeOne * 1000)} µs vs bare XADD ${fmt(xaddOne * 1000)} µs (${fmt(writeOne / xaddOne)}x); dedupe cost ${fmt((writeOne - xaddOne) * 1000)} µs/event`,
  );
  console.log(`  duplicate rejected (dedupe hit), 1 per call: ${fmt(dupOne * 1000)} µs`);
  console.log(
    `  batches of ${B}: ${fmt(writeBatch * 1000)} µs/event vs pipelined XADD ${fmt(xaddBatch * 1000)} µs/event (${fmt(writeBatch / xaddBatch)}x); ${Math.round(1000 / writeBatch)} events/s write-bound`,
  );
  console.log(
    `backfill, one worker end to end: ${BACKLOG} blocks in ${fmt(backfillMs)} ms = ${Math.round((BACKLOG * 1000) / backfillMs)} events/s (incl. process start)`,
  );
  console.log(
    `  peer, bare eth_getBlockByNumber at concurrency 8 via the same proxy: ${Math.round((BACKLOG * 1000) / fetchMs)} blocks/s (ratio ${fmt(backfillMs / fetchMs)}x)`,
  );
} finally {
  demand.stop();
  await worker.service.stop();
  for (const p of proxies) await p.close();
  await anvil.stop();
  await redisServer.stop();
}
