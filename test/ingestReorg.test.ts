import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { spawnIngest, startAnvil, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, RedisServer } from '@streamgate/testkit';
import type { IngestEvent, IngestLogEvent } from '@streamgate/ingest-events';
import { FAST_WORKER_ENV, holdDemand, readEvents, testChain } from './support/ingestHarness.js';
import { LOG_TOPIC, deployLogEmitter, emitLog, emitRequest } from '@streamgate/fleet';
import { ingestKeys } from '@streamgate/ingest-core/redis';

let redis: RedisServer;
let anvil: AnvilNode;
let proxy: FaultProxy;
let worker: AppProcess;
let client: Redis;
let emitter: string;
const STREAM = 'evm:anvil:logs';

beforeAll(async () => {
  redis = await startRedis();
  anvil = await startAnvil();
  proxy = await startFaultProxy(anvil);
  client = redis.client();
  emitter = await deployLogEmitter(anvil);
  worker = await spawnIngest({
    name: 'ingest-reorg',
    redisUrl: redis.url,
    topology: {
      chains: { anvil: testChain([proxy]) },
      streams: [{ stream: STREAM, chain: 'anvil', kind: 'logs', filter: { address: emitter, topics: [LOG_TOPIC] } }],
    },
    env: FAST_WORKER_ENV,
  });
});

afterAll(async () => {
  await worker?.service.stop();
  await proxy?.close();
  await anvil?.stop();
  await redis?.stop();
});

const logId = (l: { blockHash: string; logIndex: number }) => `${l.blockHash}:${l.logIndex}`;

async function nodeLogs(from: number): Promise<Set<string>> {
  const logs = await anvil.rpc<{ blockHash: string; logIndex: string }[]>('eth_getLogs', [
    { fromBlock: `0x${from.toString(16)}`, toBlock: 'latest', address: emitter },
  ]);
  return new Set(logs.map((l) => `${l.blockHash}:${Number.parseInt(l.logIndex, 16)}`));
}

/** Replays the stream as a consumer would: a retraction must name a log that is live. */
function replay(events: IngestEvent[]): Set<string> {
  const live = new Set<string>();
  for (const e of events) {
    if (e.type !== 'log') continue;
    if (e.removed) {
      if (!live.delete(logId(e))) throw new Error(`retraction of a log never written: ${logId(e)}`);
    } else {
      if (live.has(logId(e))) throw new Error(`duplicate log ${logId(e)}`);
      live.add(logId(e));
    }
  }
  return live;
}

async function written(): Promise<IngestEvent[]> {
  return (await readEvents(client, STREAM)).map((e) => e.event);
}

describe('reorgs under a live logs subscription', () => {
  it('retracts exactly what was written for dropped blocks, then writes the new canonical logs (depth 1 to 5)', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    await waitFor(() => proxy.subscribeCalls.get('newHeads') === 1, { timeoutMs: 15_000, message: 'worker subscribed' });
    // The first head the worker sees anchors the stream; logs start after it.
    await waitFor(async () => (await client.hexists(ingestKeys('sg:ingest:', 'evm:anvil:logs').state, 'cp')) === 1, {
      timeoutMs: 10_000,
      message: 'first checkpoint',
    });
    const checkpoint = JSON.parse((await client.hget(ingestKeys('sg:ingest:', 'evm:anvil:logs').state, 'cp')) ?? '{}') as {
      number?: number;
    };
    const firstBlock = Number(checkpoint.number) + 1;
    let payload = 1;
    for (let depth = 1; depth <= 5; depth++) {
      for (let i = 0; i <= depth; i++) await emitLog(anvil, emitter, payload++);
      const expected = await nodeLogs(firstBlock);
      await waitFor(async () => replay(await written()).size === expected.size, {
        timeoutMs: 15_000,
        message: `logs before reorg ${depth}`,
      });
      const before = await written();
      const head = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
      const droppedHashes = new Set<string>();
      for (let n = head - depth + 1; n <= head; n++) {
        droppedHashes.add((await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash);
      }
      const writtenForDropped = before.filter((e): e is IngestLogEvent => e.type === 'log' && !e.removed && droppedHashes.has(e.blockHash));
      // The replacement chain carries one new log in its first block.
      await anvil.rpc('anvil_reorg', [depth, [[emitRequest(emitter, 1_000 + depth), 0]]]);
      await waitFor(
        async () => {
          // Read both sides each time: the node may serve the new branch a moment after anvil_reorg returns.
          const canonical = await nodeLogs(firstBlock);
          const live = replay(await written());
          return live.size === canonical.size && [...canonical].every((id) => live.has(id));
        },
        { timeoutMs: 15_000, message: `stream converges on the node's logs after a depth-${depth} reorg` },
      );
      const after = (await written()).slice(before.length);
      const reorg = after[0];
      expect(reorg?.type).toBe('reorg');
      if (reorg?.type !== 'reorg') return;
      expect(reorg.depth).toBe(depth);
      expect(new Set(reorg.dropped.map((d) => d.hash))).toEqual(droppedHashes);
      const retractions = after.filter((e): e is IngestLogEvent => e.type === 'log' && e.removed);
      expect(retractions.map(logId).sort()).toEqual(writtenForDropped.map(logId).sort());
      // Retractions come right after the reorg event, before any new log.
      expect(after.slice(1, 1 + retractions.length).every((e) => e.type === 'log' && e.removed)).toBe(true);
      const fresh = after.filter((e): e is IngestLogEvent => e.type === 'log' && !e.removed);
      expect(fresh.map((l) => l.data)).toEqual([`0x${(1_000 + depth).toString(16).padStart(64, '0')}`]);
    }
    const metrics = await (await fetch(`${worker.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_reorgs_total\{stream="evm:anvil:logs"\} 5/);
  });
});
