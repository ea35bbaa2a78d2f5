import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RANGE_REFUSALS, spawnIngest, startAnvil, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, RangeRefusalReply, RedisServer } from '@streamgate/testkit';
import type { IngestEvent } from '@streamgate/ingest-events';
import { FAST_WORKER_ENV, holdDemand, readEvents, testChain } from './support/ingestHarness.js';
import { LOG_TOPIC, deployLogEmitter, emitLog } from '@streamgate/fleet';
import { ingestKeys } from '@streamgate/ingest-core/redis';

/*
 * A backfill of logs against a provider that refuses eth_getLogs ranges wider than a few blocks,
 * worded the ways providers word it: the worker must split the range until the provider accepts
 * it and still write every log exactly once.
 */
let redis: RedisServer;
let anvil: AnvilNode;
let proxy: FaultProxy;
let client: Redis;
let emitter: string;
const workers: AppProcess[] = [];
const STREAM = 'evm:anvil:ranges';
const STATE = ingestKeys('sg:ingest:', STREAM).state;

beforeAll(async () => {
  redis = await startRedis();
  anvil = await startAnvil();
  proxy = await startFaultProxy(anvil);
  client = redis.client();
  emitter = await deployLogEmitter(anvil);
});

afterAll(async () => {
  for (const w of workers) await w.service.stop();
  await proxy?.close();
  await anvil?.stop();
  await redis?.stop();
});

async function startWorker(name: string): Promise<AppProcess> {
  const worker = await spawnIngest({
    name,
    redisUrl: redis.url,
    topology: {
      chains: { anvil: testChain([proxy], { maxBackfillBlocks: 64, getLogsRangeBlocks: 100 }) },
      streams: [{ stream: STREAM, chain: 'anvil', kind: 'logs', filter: { address: emitter, topics: [LOG_TOPIC] } }],
    },
    env: FAST_WORKER_ENV,
  });
  workers.push(worker);
  return worker;
}

const logId = (l: { blockHash: string; logIndex: number }) => `${l.blockHash}:${l.logIndex}`;

async function nodeLogs(from: number): Promise<string[]> {
  const logs = await anvil.rpc<{ blockHash: string; logIndex: string }[]>('eth_getLogs', [
    { fromBlock: `0x${from.toString(16)}`, toBlock: 'latest', address: emitter },
  ]);
  return logs.map((l) => `${l.blockHash}:${Number.parseInt(l.logIndex, 16)}`).sort();
}

/** Every log in the stream, in order; a log written twice appears twice. */
async function streamLogs(): Promise<string[]> {
  return (await readEvents(client, STREAM))
    .map((e) => e.event)
    .filter((e): e is Extract<IngestEvent, { type: 'log' }> => e.type === 'log' && !e.removed)
    .map(logId);
}

async function checkpoint(): Promise<number> {
  return (JSON.parse((await client.hget(STATE, 'cp')) ?? '{"number":-1}') as { number: number }).number;
}

/** Stops the owner, makes `blocks` blocks (every other one with a log) and resumes on a new worker. */
async function backfillAgainst(
  name: string,
  blocks: number,
  maxBlocks: number,
  reply: RangeRefusalReply,
  firstBlock: number,
): Promise<void> {
  const owner = workers.at(-1);
  await owner?.service.stop();
  let payload = 0;
  for (let i = 0; i < blocks; i++) {
    if (i % 2 === 0) await emitLog(anvil, emitter, ++payload);
    else await anvil.mine(1);
  }
  const head = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
  proxy.refuseLogRanges(maxBlocks, reply);
  const refusedBefore = proxy.refusedLogRanges;
  const forwardedBefore = proxy.forwardedLogRangeWidths.length;
  await startWorker(name);
  await waitFor(async () => (await checkpoint()) >= head, {
    timeoutMs: 20_000,
    message: `backfill to block ${head} past ranges over ${maxBlocks} blocks refused`,
  });
  const written = await streamLogs();
  expect(written).toEqual([...new Set(written)]);
  expect([...written].sort()).toEqual(await nodeLogs(firstBlock));
  // Split by bisection: a handful of refusals, not one per chunk or one per retry.
  expect(proxy.refusedLogRanges - refusedBefore).toBeGreaterThan(0);
  expect(proxy.refusedLogRanges - refusedBefore).toBeLessThanOrEqual(8);
  const widths = proxy.forwardedLogRangeWidths.slice(forwardedBefore);
  expect(Math.max(...widths)).toBeLessThanOrEqual(maxBlocks);
  // The learned span stays close to the limit instead of collapsing to single blocks.
  expect(widths.filter((w) => w >= Math.floor(maxBlocks / 2)).length).toBeGreaterThan(widths.length / 2);
}

describe('log backfill against a provider that refuses wide ranges', () => {
  it('splits refused ranges, learns the span, and writes every log once', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    await startWorker('ranges-a');
    await waitFor(async () => (await checkpoint()) >= 0, { timeoutMs: 15_000, message: 'first checkpoint' });
    const firstBlock = (await checkpoint()) + 1;
    await emitLog(anvil, emitter, 1);
    await waitFor(async () => (await streamLogs()).length === 1, { timeoutMs: 10_000, message: 'a live log' });

    await backfillAgainst('ranges-b', 40, 3, RANGE_REFUSALS.infura, firstBlock);
    await backfillAgainst('ranges-c', 30, 5, RANGE_REFUSALS.tooLarge, firstBlock);
    await backfillAgainst('ranges-d', 30, 4, RANGE_REFUSALS.maxRange, firstBlock);

    const metrics = await (await fetch(`${workers.at(-1)?.httpUrl ?? ''}/metrics`)).text();
    expect(metrics).toMatch(/ingest_provider_errors_total\{provider="p0",code="range_refused"\} [1-9]/);
  });
});
