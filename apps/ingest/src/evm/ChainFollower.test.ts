import { describe, expect, it } from 'vitest';
import type { RunContext } from '@streamgate/ingest-core';
import { MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import { ingestEventSchema } from '@streamgate/ingest-events';
import type { IngestEvent } from '@streamgate/ingest-events';
import { chainSchema, streamSpecSchema } from '../config.js';
import { ChainFollower } from './ChainFollower.js';
import type { EvmRunEvents } from './evmEvents.js';
import { blockHeaderSchema } from './rpcSchemas.js';
import type { BlockHeader } from './rpcSchemas.js';
import { FakeChain } from './testing/FakeChain.js';

const noEvents: EvmRunEvents = {
  failover: () => undefined,
  backfill: () => undefined,
  degraded: () => undefined,
  gap: () => undefined,
  reorg: () => undefined,
  dedupeHits: () => undefined,
  written: () => undefined,
  providerError: () => undefined,
  stateChanged: () => undefined,
  failback: () => undefined,
};

/** Replays a logs stream as a consumer would: adds minus retractions, each retraction of a live log. */
function liveLogs(events: readonly IngestEvent[]): string[] {
  const live = new Set<string>();
  for (const e of events) {
    if (e.type !== 'log') continue;
    const id = `${e.blockHash}:${e.logIndex}`;
    if (e.removed ? !live.delete(id) : live.has(id))
      throw new Error(`${e.removed ? 'retraction of a dead' : 'second add of a live'} log ${id}`);
    if (!e.removed) live.add(id);
  }
  return [...live].sort();
}

function setup(kind: 'newHeads' | 'logs', chainOptions: Record<string, unknown> = {}, continuity = 'best_effort') {
  const writer = new MemoryStreamWriter();
  writer.fences.set('s', 1);
  const chain = new FakeChain();
  const spec = streamSpecSchema.parse({ stream: 's', chain: 'fake', kind, continuity });
  const config = chainSchema.parse({ providers: [{ id: 'p', httpUrl: 'http://x', wsUrl: 'ws://x' }], ...chainOptions });
  const follower = async (loseAnswers = 0) => {
    let lose = loseAnswers;
    const write: RunContext['write'] = async (b) => {
      const outcome = await writer.write({ key: 's', token: 1 }, b);
      // Applied, but the answer never reached the worker (a timeout or a dropped connection).
      if (lose-- > 0) return { ok: false, error: { code: 'redis_unavailable', retryable: true, message: 'answer lost' } };
      return outcome;
    };
    const ctx: RunContext = {
      key: 's',
      state: await writer.loadState({ key: 's', token: 1 }),
      write,
      signal: new AbortController().signal,
    };
    return new ChainFollower(ctx, spec, config, chain, noEvents);
  };
  const events = (): IngestEvent[] => (writer.streams.get('s') ?? []).map((e) => ingestEventSchema.parse(JSON.parse(e.data)));
  return { chain, follower, events };
}

describe('ChainFollower', () => {
  it('writes each block once, in order, and backfills a skipped range', async () => {
    const { chain, follower, events } = setup('newHeads');
    const f = await follower();
    for (const head of chain.mine(3)) await f.onHead(head);
    await f.onHead(chain.canonical.length > 2 ? blockHeaderSchema.parse(chain.canonical[2]) : (chain.mine(1)[0] as BlockHeader));
    const skipped = chain.mine(4);
    const last = skipped[3];
    if (last === undefined) throw new Error('no head');
    await f.onHead(last);
    expect(events().map((e) => (e.type === 'block' ? e.number : e.type))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('retracts exactly the logs written for dropped blocks, also after a restart from the saved state', async () => {
    const { chain, follower, events } = setup('logs');
    const first = await follower();
    for (const head of chain.mine(5)) await first.onHead(head);
    const droppedHashes = chain.canonical.slice(4).map((b) => b.hash);
    // The worker restarts: a new follower built only from what was written.
    const second = await follower();
    for (const head of chain.reorg(2)) await second.onHead(head);
    const all = events();
    const reorgAt = all.findIndex((e) => e.type === 'reorg');
    expect(all[reorgAt]).toMatchObject({ type: 'reorg', depth: 2, commonAncestor: { number: 3 } });
    const retracted = all.slice(reorgAt + 1, reorgAt + 3);
    expect(retracted.map((e) => e.type === 'log' && e.removed && e.blockHash)).toEqual([droppedHashes[1], droppedHashes[0]]);
    const fresh = all.slice(reorgAt + 3);
    expect(fresh.map((e) => e.type === 'log' && !e.removed && e.blockNumber)).toEqual([4, 5]);
  });

  it('a chain that flips back to a branch it left (A, B, A, B) re-adds, retracts and reorgs each time', async () => {
    const { chain, follower, events } = setup('logs');
    const f = await follower();
    for (const head of chain.mine(3)) await f.onHead(head);
    const a = chain.snapshot();
    const [bHead] = chain.reorg(1);
    const b = chain.snapshot();
    if (bHead === undefined) throw new Error('no head');
    await f.onHead(bHead);
    await f.onHead(chain.restore(a));
    // A restarted owner sees the last flip: it must not take the earlier B entries for its own.
    const again = await follower();
    await again.onHead(chain.restore(b));
    const all = events();
    expect(all.filter((e) => e.type === 'reorg')).toHaveLength(3);
    const canonical = chain.canonical
      .slice(1)
      .flatMap((blk) => (chain.logs.get(blk.hash) ?? []).map((l) => `${l.blockHash}:${Number.parseInt(l.logIndex, 16)}`));
    expect(liveLogs(all)).toEqual(canonical.sort());
    expect(liveLogs(all)).toContain(`${bHead.hash}:0`);
  });

  it('a write whose answer was lost is retried without writing its entries twice', async () => {
    const { chain, follower, events } = setup('logs');
    const f = await follower(2);
    for (const head of chain.mine(3)) await f.onHead(head);
    expect(events().map((e) => e.type === 'log' && e.blockNumber)).toEqual([1, 2, 3]);
    // A successor from the saved state offered the same head writes nothing either.
    const again = await follower();
    await again.onHead(blockHeaderSchema.parse(chain.canonical[3]));
    expect(events()).toHaveLength(3);
  });

  it('retries a pushed head that the HTTP node does not know yet, rather than drop it', async () => {
    const { chain, follower, events } = setup('newHeads');
    const f = await follower();
    for (const head of chain.mine(3)) await f.onHead(head);
    // The push comes from one node; the node answering HTTP has not got the block yet.
    const [head] = chain.mine(1);
    const lagging = chain.canonical.pop();
    if (head === undefined || lagging === undefined) throw new Error('no head');
    const first = await f.onHead(head);
    expect(first).toMatchObject({ ok: false, kind: 'retry', code: 'rpc_error' });
    expect(events()).toHaveLength(3);
    chain.canonical.push(lagging);
    expect(await f.onHead(head)).toEqual({ ok: true });
    expect(events().map((e) => (e.type === 'block' ? e.number : e.type))).toEqual([1, 2, 3, 4]);
  });

  it('ignores a head pushed before a reorg that arrives after it', async () => {
    const { chain, follower, events } = setup('newHeads');
    const f = await follower();
    const old = chain.mine(3);
    for (const head of old) await f.onHead(head);
    for (const head of chain.reorg(1)) await f.onHead(head);
    const stale = old[2];
    if (stale === undefined) throw new Error('no head');
    await f.onHead(stale);
    expect(events().filter((e) => e.type === 'reorg')).toHaveLength(1);
    expect(f.checkpoint?.hash).toBe(chain.canonical[3]?.hash);
  });

  it('best effort: a gap over the limit is a typed gap event, then the newest blocks', async () => {
    const { chain, follower, events } = setup('newHeads', { maxBackfillBlocks: 2 });
    const f = await follower();
    const [one] = chain.mine(1);
    if (one === undefined) throw new Error('no head');
    await f.onHead(one);
    const heads = chain.mine(6);
    await f.onHead(heads[5] as BlockHeader);
    expect(events().map((e) => (e.type === 'block' ? e.number : e.type === 'gap' ? `gap ${e.fromBlock}-${e.toBlock}` : e.type))).toEqual([
      1,
      'gap 2-4',
      5,
      6,
      7,
    ]);
  });

  it('strict: a gap over the limit writes a stream error and halts, also after a restart', async () => {
    const { chain, follower, events } = setup('newHeads', { maxBackfillBlocks: 2 }, 'strict');
    const f = await follower();
    await f.onHead(chain.mine(1)[0] as BlockHeader);
    const heads = chain.mine(6);
    expect(await f.onHead(heads[5] as BlockHeader)).toMatchObject({ ok: false, kind: 'end', end: { reason: 'halted' } });
    expect(events().at(-1)).toMatchObject({ type: 'stream_error', code: 'gap_exceeds_backfill_limit', fromBlock: 2, toBlock: 6 });
    const again = await follower();
    expect(again.haltedReason).not.toBeNull();
    expect(await again.onHead(chain.mine(1)[0] as BlockHeader)).toMatchObject({ ok: false, kind: 'end', end: { reason: 'halted' } });
    expect(events().at(-1)?.type).toBe('stream_error');
  });

  it('ignores a late push of a block older than the block it anchored on', async () => {
    const { chain, follower, events } = setup('newHeads');
    const f = await follower();
    const heads = chain.mine(3);
    await f.followNumber(3);
    await f.onHead(heads[1] as BlockHeader);
    expect(events().map((e) => (e.type === 'block' ? e.number : e.type))).toEqual([3]);
    await f.onHead(chain.mine(1)[0] as BlockHeader);
    expect(events().map((e) => (e.type === 'block' ? e.number : e.type))).toEqual([3, 4]);
  });
});
