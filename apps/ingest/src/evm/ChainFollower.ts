import { z } from 'zod';
import type { RunContext, WriteEntry } from '@streamgate/ingest-core';
import type { IngestEvent, IngestLogEvent } from '@streamgate/ingest-events';
import type { ChainConfig, StreamSpec } from '../config.js';
import type { BlockRecord, Checkpoint, EvmRunEvents } from './evmEvents.js';
import { BlockLogReader } from './BlockLogReader.js';
import type { RpcReader } from './ProviderPool.js';
import { RpcFailure } from './RpcError.js';
import { RunStop } from './RunStop.js';
import { SequencedWriter } from './SequencedWriter.js';
import { blockHeaderSchema, quantitySchema } from './rpcSchemas.js';
import type { BlockHeader } from './rpcSchemas.js';

const CP = 'cp';
const HALTED = 'halted';
const blockField = (n: number) => `b:${n}`;
const checkpointSchema = z.object({ number: z.number().int().nonnegative(), hash: z.string().nullable() });
const blockRecordSchema = z.object({ hash: z.string(), parentHash: z.string(), logs: z.array(z.unknown()).optional() });

const toHex = (n: number) => `0x${n.toString(16)}`;

/**
 * Follows one chain for one stream, by hash: every block is written only if its parent is the
 * block written before it; a head that does not chain up is a reorg (walk back to the common
 * ancestor, retract, write the new branch) and a head too far ahead is a gap (backfill over HTTP,
 * bounded). State (checkpoint and the last `historyDepth` blocks with the logs written for them)
 * goes to Redis in the same atomic step as the entries, so a new owner continues exactly here.
 */
export class ChainFollower {
  private cp: Checkpoint | null = null;
  private readonly blocks = new Map<number, BlockRecord>();
  private halted: string | null = null;
  private readonly writer: SequencedWriter;
  /** Logs fetched by range during a backfill, by block hash, consumed as blocks are written. */
  private readonly prefetched = new Map<string, IngestLogEvent[]>();
  private readonly logs: BlockLogReader;

  constructor(
    private readonly ctx: RunContext,
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: RpcReader,
    private readonly events: EvmRunEvents,
  ) {
    const cp = ctx.state.get(CP);
    if (cp !== undefined) this.cp = checkpointSchema.parse(JSON.parse(cp));
    this.halted = ctx.state.get(HALTED) ?? null;
    this.logs = new BlockLogReader(pool, spec, chain, events);
    this.writer = new SequencedWriter(ctx, spec.stream, events);
    for (const [field, value] of ctx.state) {
      if (!field.startsWith('b:')) continue;
      const parsed = blockRecordSchema.parse(JSON.parse(value));
      this.blocks.set(Number(field.slice(2)), parsed as BlockRecord);
    }
  }

  get checkpoint(): Checkpoint | null {
    return this.cp;
  }

  get haltedReason(): string | null {
    return this.halted;
  }

  /** Fetches the block at `number` over HTTP and follows it (the oracle's and degraded mode's path). */
  async followNumber(number: number, avoid?: string): Promise<void> {
    if (this.cp !== null && number <= this.cp.number) return;
    const block = await this.blockAt(number, avoid);
    if (block === null) await this.followShorterChain(number, avoid);
    else await this.onHead(block);
  }

  /** The node's block at `number`, or null if it has none there (yet, or any more). */
  private async blockAt(number: number, avoid?: string): Promise<BlockHeader | null> {
    const result = await this.pool.call('eth_getBlockByNumber', [toHex(number), false], blockHeaderSchema.nullable(), avoid);
    if (!result.ok) throw new RpcFailure(result.error);
    return result.value;
  }

  /**
   * No block at `number`: either it is not there yet (retried by the caller), or a reorg moved
   * the chain onto a shorter branch and the height is gone. Waiting for the height to come back
   * would hold every later head behind it, so the stream follows the node's head instead.
   */
  private async followShorterChain(number: number, avoid?: string): Promise<void> {
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema, avoid);
    if (!head.ok) throw new RpcFailure(head.error);
    const block = head.value < number ? await this.blockAt(head.value, avoid) : null;
    if (block === null) {
      throw new RpcFailure({
        code: 'rpc_error',
        retryable: true,
        provider: 'http',
        message: `eth_getBlockByNumber(${toHex(number)}) is not known yet`,
        rpcCode: 0,
      });
    }
    await this.onHead(block);
  }

  async onHead(head: BlockHeader): Promise<void> {
    if (this.halted !== null) throw new RunStop({ reason: 'halted', message: this.halted });
    const cp = this.cp;
    if (cp === null) {
      await this.commit([head], { set: {}, del: [] }, []);
      return;
    }
    if (this.blocks.get(head.number)?.hash === head.hash || (head.number === cp.number && head.hash === cp.hash)) {
      this.events.dedupeHits(this.spec.stream, 'memory', 1);
      // A late duplicate, or the node's chain became shorter than ours and this is its head now.
      if (head.number < cp.number && cp.hash !== null) await this.recheckTip(cp);
      return;
    }
    if (head.number <= cp.number && this.isBelowHistory(head.number)) {
      // A push older than anything this stream tracks (it was anchored or re-anchored above it,
      // e.g. a late push of the block before the anchor): not this stream's to write or to retract.
      this.events.dedupeHits(this.spec.stream, 'memory', 1);
      return;
    }
    if (head.number > cp.number + 1) {
      // false: the node's chain no longer reaches this head, and the stream followed its new head.
      if (!(await this.backfill(cp.number + 1, head.number - 1))) return;
      return this.onHead(head);
    }
    const current = this.cp ?? cp;
    if (current.hash === null && head.number === current.number + 1) {
      await this.commit([head], { set: {}, del: [] }, []);
      return;
    }
    if (!(await this.isCanonical(head))) return;
    // Walk back from the head until a parent is a block we wrote.
    const branch: BlockHeader[] = [head];
    let tip = head;
    for (;;) {
      const parent = this.blocks.get(tip.number - 1);
      if (parent?.hash === tip.parentHash) break;
      if (parent === undefined) {
        await this.historyExhausted(head);
        return;
      }
      tip = await this.fetchBlock('eth_getBlockByHash', [tip.parentHash, false]);
      branch.unshift(tip);
    }
    const ancestor = tip.number - 1;
    if (ancestor === current.number) await this.commit(branch, { set: {}, del: [] }, []);
    else await this.reorg(ancestor, branch);
  }

  /** Asks the node whether our tip is still canonical, and follows it if not. */
  private async recheckTip(cp: Checkpoint): Promise<void> {
    const current = await this.blockAt(cp.number);
    if (current?.hash === cp.hash) return;
    if (current !== null) return this.onHead(current);
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema);
    if (!head.ok) throw new RpcFailure(head.error);
    const block = head.value < cp.number ? await this.blockAt(head.value) : null;
    if (block === null)
      throw new RpcFailure({
        code: 'rpc_error',
        retryable: true,
        provider: 'http',
        message: `eth_getBlockByNumber(${toHex(cp.number)}) vanished`,
        rpcCode: 0,
      });
    // The node's head is a block we wrote: everything above it is retracted, with no new branch.
    if (this.blocks.get(block.number)?.hash === block.hash) await this.reorg(block.number, []);
    else await this.onHead(block);
  }

  private isBelowHistory(number: number): boolean {
    for (const kept of this.blocks.keys()) if (kept <= number) return false;
    return true;
  }

  /**
   * A head that does not extend the checkpoint is a reorg only if the node still calls it
   * canonical: a push queued before a reorg arrives after it with a hash that is already gone,
   * and following it would flip the stream back to a dead branch. Such a head is replaced by
   * the block the node now has at that height.
   */
  private async isCanonical(head: BlockHeader): Promise<boolean> {
    const current = await this.blockAt(head.number);
    if (current?.hash === head.hash) return true;
    this.events.dedupeHits(this.spec.stream, 'memory', 1);
    if (current === null) await this.followShorterChain(head.number);
    else await this.onHead(current);
    return false;
  }

  private async reorg(ancestor: number, branch: BlockHeader[]): Promise<void> {
    const dropped = [...this.blocks.entries()].filter(([n]) => n > ancestor).sort(([a], [b]) => b - a);
    const ancestorRecord = this.blocks.get(ancestor);
    const chain = this.spec.chain;
    const entries: WriteEntry[] = [];
    const reorg: IngestEvent = {
      type: 'reorg',
      chain,
      commonAncestor: { number: ancestor, hash: ancestorRecord?.hash ?? '0x' },
      dropped: dropped.map(([number, r]) => ({ number, hash: r.hash })),
      depth: dropped.length,
    };
    entries.push({ dedupeId: `o:${dropped[0]?.[1].hash ?? ''}:${branch[0]?.hash ?? ''}`, data: JSON.stringify(reorg) });
    for (const [, record] of dropped) {
      for (const log of [...(record.logs ?? [])].reverse()) {
        entries.push({ dedupeId: `r:${log.blockHash}:${log.logIndex}`, data: JSON.stringify({ ...log, removed: true }) });
      }
    }
    this.events.reorg(this.spec.stream, dropped.length);
    const ancestorCp: Checkpoint = { number: ancestor, hash: ancestorRecord?.hash ?? null };
    // The checkpoint moves to the ancestor unless the branch (written in the same step) moves it on.
    const state = { set: { [CP]: JSON.stringify(ancestorCp) }, del: dropped.map(([n]) => blockField(n)) };
    await this.commit(branch, state, entries, () => {
      for (const [n] of dropped) this.blocks.delete(n);
      this.cp = ancestorCp;
    });
  }

  /** A head whose ancestry leaves the kept history: the stream cannot retract exactly. */
  private async historyExhausted(head: BlockHeader): Promise<void> {
    const from = Math.max(0, head.number - this.chain.historyDepth);
    await this.discontinuity(from, head.number - 1, 'history_exhausted');
    await this.commit([head], { set: {}, del: [] }, []);
  }

  private async backfill(from: number, to: number): Promise<boolean> {
    let start = from;
    if (to - from + 1 > this.chain.maxBackfillBlocks) {
      start = to - this.chain.maxBackfillBlocks + 1;
      // Strict reports the whole hole it refuses to paper over; best effort fills the newest part.
      await this.discontinuity(from, this.spec.continuity === 'strict' ? to : start - 1, 'backfill_limit');
    }
    const started = performance.now();
    const headers: BlockHeader[] = [];
    for (let n = start; n <= to; n += 8) {
      const batch = await Promise.all(Array.from({ length: Math.min(8, to - n + 1) }, (_, i) => this.blockAt(n + i)));
      const missing = batch.findIndex((b) => b === null);
      if (missing >= 0) {
        await this.followShorterChain(n + missing);
        return false;
      }
      headers.push(...batch.filter((b) => b !== null));
    }
    if (this.spec.kind === 'logs') {
      const fetched = await this.logs.forRange(start, to);
      for (const log of fetched.logs) {
        const list = this.prefetched.get(log.blockHash) ?? [];
        list.push(log);
        this.prefetched.set(log.blockHash, list);
      }
      // A range that came back with no logs for a block still says the block has none; a block
      // no provider would serve even alone is left out, so it is fetched by hash when written.
      const refused = new Set(fetched.refusedBlocks);
      for (const h of headers) if (!this.prefetched.has(h.hash) && !refused.has(h.number)) this.prefetched.set(h.hash, []);
    }
    const fetchedMs = performance.now() - started;
    await this.writeBackfilled(headers);
    this.prefetched.clear();
    this.events.backfill(this.spec.stream, to - start + 1, fetchedMs, performance.now() - started - fetchedMs);
    return true;
  }

  /**
   * Writes fetched blocks in atomic steps of up to 100 while each links to the one before it;
   * a block that does not (the chain moved during the backfill) goes through onHead's reorg path.
   */
  private async writeBackfilled(headers: readonly BlockHeader[]): Promise<void> {
    let i = 0;
    while (i < headers.length) {
      const chunk: BlockHeader[] = [];
      let prevNumber = this.cp?.number ?? -1;
      let prevHash = this.cp?.hash ?? null;
      for (let h = headers[i]; h !== undefined && chunk.length < 100; h = headers[i]) {
        if (h.number !== prevNumber + 1 || (prevHash !== null && h.parentHash !== prevHash)) break;
        chunk.push(h);
        prevNumber = h.number;
        prevHash = h.hash;
        i++;
      }
      if (chunk.length > 0) {
        await this.commit(chunk, { set: {}, del: [] }, []);
        continue;
      }
      const next = headers[i++];
      if (next !== undefined) await this.onHead(next);
    }
  }

  /** Writes a typed gap (best effort) or an explicit stream error and halts (strict). */
  private async discontinuity(fromBlock: number, toBlock: number, reason: 'backfill_limit' | 'history_exhausted'): Promise<void> {
    const chain = this.spec.chain;
    this.events.gap(this.spec.stream, fromBlock, toBlock, this.spec.continuity);
    if (this.spec.continuity === 'strict') {
      const message =
        reason === 'backfill_limit'
          ? `blocks ${fromBlock}..${toBlock} exceed the backfill limit of ${this.chain.maxBackfillBlocks}`
          : `a reorg reaches below the ${this.chain.historyDepth} blocks of kept history`;
      const event: IngestEvent = {
        type: 'stream_error',
        chain,
        code: reason === 'backfill_limit' ? 'gap_exceeds_backfill_limit' : 'reorg_deeper_than_history',
        message,
        fromBlock,
        toBlock,
      };
      await this.writer.write({
        entries: [{ dedupeId: `e:${fromBlock}:${toBlock}`, data: JSON.stringify(event) }],
        stateSet: { [HALTED]: message },
      });
      this.halted = message;
      throw new RunStop({ reason: 'halted', message });
    }
    const event: IngestEvent = { type: 'gap', chain, fromBlock, toBlock, reason };
    const del = [...this.blocks.keys()].map(blockField);
    const cp: Checkpoint = { number: toBlock, hash: null };
    await this.writer.write({
      entries: [{ dedupeId: `g:${fromBlock}:${toBlock}`, data: JSON.stringify(event) }],
      stateSet: { [CP]: JSON.stringify(cp) },
      stateDel: del,
    });
    this.blocks.clear();
    this.cp = cp;
  }

  /**
   * Writes `branch` (consecutive blocks) after `prefix` entries in one atomic step. `beforeApply`
   * updates memory for the prefix (a reorg's drops) once the write succeeded.
   */
  private async commit(
    branch: readonly BlockHeader[],
    state: { set: Record<string, string>; del: string[] },
    prefix: WriteEntry[],
    beforeApply?: () => void,
  ): Promise<void> {
    const entries = [...prefix];
    const records = new Map<number, BlockRecord>();
    for (const block of branch) {
      const record: BlockRecord = { hash: block.hash, parentHash: block.parentHash };
      if (this.spec.kind === 'newHeads') {
        const event: IngestEvent = {
          type: 'block',
          chain: this.spec.chain,
          number: block.number,
          hash: block.hash,
          parentHash: block.parentHash,
          timestamp: block.timestamp,
          header: block,
        };
        entries.push({ dedupeId: `b:${block.hash}`, data: JSON.stringify(event) });
      } else {
        const logs = this.prefetched.get(block.hash) ?? (await this.logs.forBlock(block));
        record.logs = logs;
        for (const log of logs) entries.push({ dedupeId: `l:${log.blockHash}:${log.logIndex}`, data: JSON.stringify(log) });
      }
      records.set(block.number, record);
      state.set[blockField(block.number)] = JSON.stringify(record);
    }
    const last = branch[branch.length - 1];
    if (last === undefined && entries.length === 0) return;
    const cp: Checkpoint | null = last === undefined ? null : { number: last.number, hash: last.hash };
    if (cp !== null) state.set[CP] = JSON.stringify(cp);
    const floor = cp === null ? -1 : cp.number - this.chain.historyDepth;
    const expired = [...this.blocks.keys()].filter((n) => n <= floor);
    state.del.push(...expired.map(blockField));
    // The write step sets fields before it deletes them: a dropped height that the new branch
    // fills again must not be deleted, or a successor would load a history without it.
    const del = state.del.filter((field) => !(field in state.set));
    await this.writer.write({ entries, stateSet: state.set, stateDel: del });
    beforeApply?.();
    for (const n of expired) this.blocks.delete(n);
    for (const [n, r] of records) this.blocks.set(n, r);
    if (cp !== null) this.cp = cp;
  }

  private async fetchBlock(method: string, params: unknown[], avoid?: string): Promise<BlockHeader> {
    const result = await this.pool.call(method, params, blockHeaderSchema.nullable(), avoid);
    if (!result.ok) throw new RpcFailure(result.error);
    if (result.value === null) {
      throw new RpcFailure({
        code: 'rpc_error',
        retryable: true,
        provider: 'http',
        message: `${method}(${String(params[0])}) is not known yet`,
        rpcCode: 0,
      });
    }
    return result.value;
  }
}
