import { z } from 'zod';
import type { RunContext, WriteEntry } from '@streamgate/ingest-core';
import type { Clock } from '@streamgate/protocol';
import type { IngestEvent, IngestLogEvent } from '@streamgate/ingest-events';
import type { ChainConfig, StreamSpec } from '../config.js';
import type { BlockLogReader } from './BlockLogReader.js';
import type { BlockRecord, Checkpoint, EvmRunEvents } from './evmEvents.js';
import type { BlockHeader } from './rpcSchemas.js';
import { SequencedWriter } from './SequencedWriter.js';

const CP = 'cp';
const HALTED = 'halted';
const blockField = (n: number) => `b:${n}`;
const checkpointSchema = z.object({ number: z.number().int().nonnegative(), hash: z.string().nullable() });
const blockRecordSchema = z.object({ hash: z.string(), parentHash: z.string(), logs: z.array(z.unknown()).optional() });

/**
 * What a stream has written of its chain: the checkpoint, the last `historyDepth` blocks with
 * the logs written for them, and a halt. Each change goes to Redis in the same atomic step as
 * its entries, and memory follows only once that step succeeded, so a new owner loading the
 * state continues exactly here.
 */
export class ChainLedger {
  private cp: Checkpoint | null = null;
  private readonly blocks = new Map<number, BlockRecord>();
  private halted: string | null = null;
  private readonly writer: SequencedWriter;
  /** Logs fetched by range during a backfill, by block hash, consumed as blocks are written. */
  private readonly prefetched = new Map<string, IngestLogEvent[]>();

  constructor(
    ctx: RunContext,
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly logs: BlockLogReader,
    private readonly events: EvmRunEvents,
    clock: Clock,
  ) {
    const cp = ctx.state.get(CP);
    if (cp !== undefined) this.cp = checkpointSchema.parse(JSON.parse(cp));
    this.halted = ctx.state.get(HALTED) ?? null;
    this.writer = new SequencedWriter(ctx, spec.stream, events, clock);
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

  /** The hash written at `number`, if it is still in the kept history. */
  hashAt(number: number): string | undefined {
    return this.blocks.get(number)?.hash;
  }

  /** Logs fetched by range for `headers`: a block missing from `logs` has none, unless `refused`. */
  prefetch(logs: readonly IngestLogEvent[], headers: readonly BlockHeader[], refused: ReadonlySet<number>): void {
    this.prefetched.clear();
    for (const log of logs) {
      const list = this.prefetched.get(log.blockHash) ?? [];
      list.push(log);
      this.prefetched.set(log.blockHash, list);
    }
    // A range that came back with no logs for a block still says the block has none; a block
    // no provider would serve even alone is left out, so it is fetched by hash when written.
    for (const h of headers) if (!this.prefetched.has(h.hash) && !refused.has(h.number)) this.prefetched.set(h.hash, []);
  }

  clearPrefetched(): void {
    this.prefetched.clear();
  }

  isBelowHistory(number: number): boolean {
    for (const kept of this.blocks.keys()) if (kept <= number) return false;
    return true;
  }

  async reorg(ancestor: number, branch: BlockHeader[]): Promise<void> {
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

  /**
   * Writes a typed gap (best effort) or an explicit stream error and halts (strict); false when
   * halted, and the walk then writes nothing more.
   */
  async discontinuity(fromBlock: number, toBlock: number, reason: 'backfill_limit' | 'history_exhausted'): Promise<boolean> {
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
      return false;
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
    return true;
  }

  /**
   * Writes `branch` (consecutive blocks) after `prefix` entries in one atomic step. `beforeApply`
   * updates memory for the prefix (a reorg's drops) once the write succeeded.
   */
  async commit(
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
}
