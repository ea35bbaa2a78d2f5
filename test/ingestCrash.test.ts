import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import { spawnIngest, startAnvil, startFaultProxy, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy } from '@streamgate/testkit';
import { FAST_WORKER_ENV, assertExactBlocks, holdDemand, readEvents, testChain } from './support/ingestHarness.js';
import { ingestKeys } from '@streamgate/ingest-core/redis';
import { oneRedisTarget, redisClusterTarget, redisInstancesTarget } from './support/ingestTargets.js';
import type { IngestTarget } from './support/ingestTargets.js';
import { mineEvery } from './support/mineEvery.js';

let anvil: AnvilNode;
let proxies: FaultProxy[];

beforeAll(async () => {
  anvil = await startAnvil();
  proxies = [await startFaultProxy(anvil), await startFaultProxy(anvil)];
});

afterAll(async () => {
  for (const p of proxies ?? []) await p.close();
  await anvil?.stop();
});

async function settle(client: Redis | Cluster, stream: string, head: number): Promise<void> {
  await waitFor(
    async () => {
      const last = (await readEvents(client, stream)).at(-1)?.event;
      return last?.type === 'block' && last.number === head;
    },
    { timeoutMs: 20_000, message: `${stream} reaches block ${head}` },
  );
}

const ownerOf = (ws: AppProcess[], stream: string) =>
  ws.find((w) => w.service.exitStatus === undefined && w.service.lines.some((l) => l.includes('"lease acquired"') && l.includes(stream)));

// Each target kind runs the exactly-once tests with two streams on two different primaries or
// instances; the second carries a hash tag, which its ingest keys must follow into its slot.
describe.each([
  { name: 'one Redis', open: oneRedisTarget },
  { name: 'a Redis Cluster of 3 primaries with a replica each', open: redisClusterTarget },
  { name: 'streams placed on 2 Redis instances', open: () => redisInstancesTarget(2) },
])('ingest workers crash and hand over ($name)', ({ name, open }) => {
  let target: IngestTarget;
  const workers: AppProcess[] = [];
  const kill = 'evm:anvil:kill';
  let freeze = '';
  const client = (stream: string) => target.clientOf(stream);

  beforeAll(async () => {
    target = await open();
    for (let i = 0; freeze === '' && i < 100; i++) {
      const candidate = `{f${i}}:evm:anvil:freeze`;
      if (name === 'one Redis' || (await target.nodeOf(candidate)) !== (await target.nodeOf(kill))) freeze = candidate;
    }
    if (freeze === '') throw new Error(`no stream name found off the node of ${kill}`);
  });

  afterAll(async () => {
    for (const w of workers) await w.service.stop();
    await target?.stop();
  });

  async function startWorker(worker: string, spec: unknown[], chain: Record<string, unknown> = {}): Promise<AppProcess> {
    const started = await spawnIngest({
      name: worker,
      redisUrl: '',
      topology: { chains: { anvil: testChain(proxies, chain) }, streams: spec },
      env: { ...FAST_WORKER_ENV, ...target.env },
    });
    workers.push(started);
    return started;
  }

  it('a SIGKILLed owner is replaced within the lease TTL and the stream stays gap-free and duplicate-free', async () => {
    const stream = kill;
    const redis = client(stream);
    const spec = [{ stream, chain: 'anvil', kind: 'newHeads' }];
    const a = await startWorker('kill-a', spec);
    const b = await startWorker('kill-b', spec);
    await using _demand = holdDemand(redis, [stream]);
    await waitFor(() => ownerOf([a, b], stream) !== undefined, { timeoutMs: 15_000, message: 'one worker owns the stream' });
    const owner = ownerOf([a, b], stream);
    const other = owner === a ? b : a;
    const mining = mineEvery(anvil, 100);
    await waitFor(async () => (await readEvents(redis, stream)).length >= 5, { timeoutMs: 10_000, message: 'blocks flow' });
    owner?.service.signal('SIGKILL');
    await other.service.waitForLine(/"lease acquired"/, 10_000);
    await waitFor(async () => (await readEvents(redis, stream)).length >= 25, {
      timeoutMs: 15_000,
      message: 'blocks flow after take-over',
    });
    const head = await mining.stop();
    await settle(redis, stream, head);
    const { count } = await assertExactBlocks(redis, anvil, stream, head);
    expect(count).toBeGreaterThanOrEqual(25);
    expect(await redis.get(ingestKeys('sg:ingest:', stream).fence)).toBe('2');
  });

  it('a frozen owner that wakes up after losing its lease writes nothing (fencing)', async () => {
    const stream = freeze;
    const redis = client(stream);
    const spec = [{ stream, chain: 'anvil', kind: 'newHeads' }];
    const c = await startWorker('freeze-c', spec);
    await using _demand = holdDemand(redis, [stream]);
    await c.service.waitForLine(/"lease acquired"/, 15_000);
    const d = await startWorker('freeze-d', spec);
    const mining = mineEvery(anvil, 100);
    await waitFor(async () => (await readEvents(redis, stream)).length >= 5, { timeoutMs: 10_000, message: 'blocks flow' });
    c.service.signal('SIGSTOP');
    await d.service.waitForLine(/"lease acquired"/, 10_000);
    await waitFor(async () => (await readEvents(redis, stream)).length >= 20, { timeoutMs: 15_000, message: 'd writes' });
    const fromLine = c.service.lineCount;
    c.service.signal('SIGCONT');
    await c.service.waitForLine(/"lease lost"|"reason":"fenced"/, 10_000, { fromLine });
    const head = await mining.stop();
    await settle(redis, stream, head);
    await assertExactBlocks(redis, anvil, stream, head);
    expect(await redis.get(ingestKeys('sg:ingest:', stream).fence)).toBe('2');
    if (name !== 'one Redis') expect(await target.nodeOf(freeze)).not.toBe(await target.nodeOf(kill));
  });

  // Not about where keys live: run once, on one Redis.
  it.runIf(name === 'one Redis')(
    'a gap beyond the backfill limit writes a typed gap event (best effort) and a stream error (strict)',
    async () => {
      const spec = [
        { stream: 'evm:anvil:gap-best', chain: 'anvil', kind: 'newHeads', continuity: 'best_effort' },
        { stream: 'evm:anvil:gap-strict', chain: 'anvil', kind: 'newHeads', continuity: 'strict' },
      ];
      const streams = spec.map((s) => s.stream);
      const redis = client(streams[0] ?? '');
      await using _demand = holdDemand(redis, streams);
      const e = await startWorker('gap-e', spec, { maxBackfillBlocks: 5 });
      await anvil.mine(1);
      let head = await anvil.mine(1);
      for (const s of streams) await settle(redis, s, head);
      const last = head;
      e.service.signal('SIGKILL');
      for (let i = 0; i < 12; i++) head = await anvil.mine(1);
      await startWorker('gap-f', spec, { maxBackfillBlocks: 5 });
      await settle(redis, 'evm:anvil:gap-best', head);
      // The first head the new worker sees is `head`; the 11 blocks before it exceed the limit of 5.
      const best = (await readEvents(redis, 'evm:anvil:gap-best')).map((x) => x.event);
      const gapAt = best.findIndex((x) => x.type === 'gap');
      expect(best[gapAt]).toMatchObject({ type: 'gap', fromBlock: last + 1, toBlock: head - 6, reason: 'backfill_limit' });
      expect(best.slice(gapAt + 1).map((x) => (x.type === 'block' ? x.number : -1))).toEqual([
        head - 5,
        head - 4,
        head - 3,
        head - 2,
        head - 1,
        head,
      ]);
      await waitFor(async () => (await readEvents(redis, 'evm:anvil:gap-strict')).at(-1)?.event.type === 'stream_error', {
        timeoutMs: 10_000,
        message: 'strict stream ends with a stream error',
      });
      const strict = (await readEvents(redis, 'evm:anvil:gap-strict')).map((x) => x.event);
      expect(strict.at(-1)).toMatchObject({
        type: 'stream_error',
        code: 'gap_exceeds_backfill_limit',
        fromBlock: last + 1,
        toBlock: head - 1,
      });
      // Strict stays halted: later blocks are not written after the error.
      head = await anvil.mine(1);
      await settle(redis, 'evm:anvil:gap-best', head);
      expect((await readEvents(redis, 'evm:anvil:gap-strict')).at(-1)?.event.type).toBe('stream_error');
    },
  );
});
