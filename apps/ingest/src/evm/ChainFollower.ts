import { errorMessage } from '@streamgate/ingest-core';
import { systemClock } from '@streamgate/protocol';
import type { RunContext } from '@streamgate/ingest-core';
import type { Clock } from '@streamgate/protocol';
import type { ChainConfig, StreamSpec } from '../config.js';
import type { Checkpoint, EvmRunEvents } from './evmEvents.js';
import { BlockLogReader } from './BlockLogReader.js';
import { ChainLedger } from './ChainLedger.js';
import type { FollowOutcome } from './FollowOutcome.js';
import type { RpcReader } from './ProviderPool.js';
import { RpcFailure } from './RpcError.js';
import { RunStop } from './RunStop.js';
import { blockHeaderSchema, quantitySchema } from './rpcSchemas.js';
import type { BlockHeader } from './rpcSchemas.js';

const toHex = (n: number) => `0x${n.toString(16)}`;

/** What is left of a walk, first in line first. */
type Work =
  | { readonly kind: 'head'; readonly head: BlockHeader }
  | { readonly kind: 'number'; readonly number: number; readonly avoid?: string | undefined }
  | { readonly kind: 'shorter'; readonly number: number; readonly avoid?: string | undefined }
  | { readonly kind: 'recheck'; readonly tip: Checkpoint }
  | { readonly kind: 'written'; readonly headers: readonly BlockHeader[] };

/**
 * Follows one chain for one stream, by hash: every block is written only if its parent is the
 * block written before it; a head that does not chain up is a reorg (walk back to the common
 * ancestor, retract, write the new branch) and a head too far ahead is a gap (backfill over HTTP,
 * bounded). What was written is kept by ChainLedger, in Redis with the entries, so a new owner
 * continues exactly here.
 */
export class ChainFollower {
  private readonly ledger: ChainLedger;
  private readonly logs: BlockLogReader;

  constructor(
    ctx: RunContext,
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: RpcReader,
    private readonly events: EvmRunEvents,
    private readonly clock: Clock = systemClock,
  ) {
    this.logs = new BlockLogReader(pool, spec, chain, events);
    this.ledger = new ChainLedger(ctx, spec, chain, this.logs, events, clock);
  }

  get checkpoint(): Checkpoint | null {
    return this.ledger.checkpoint;
  }

  get haltedReason(): string | null {
    return this.ledger.haltedReason;
  }

  /** Follows a pushed head. */
  onHead(head: BlockHeader): Promise<FollowOutcome> {
    return this.follow({ kind: 'head', head });
  }

  /** Fetches the block at `number` over HTTP and follows it (the oracle's and degraded mode's path). */
  followNumber(number: number, avoid?: string): Promise<FollowOutcome> {
    return this.follow({ kind: 'number', number, avoid });
  }

  /**
   * The one loop that walks a head, a reorg or a backfill: each step does one thing (write, fetch
   * a block, fill a range) and names what is left as further work, first in line. The steps are
   * bounded, so a node whose answers never settle is retried later, not chased forever; upstream
   * and write failures thrown by the I/O helpers end the walk here, as a typed outcome.
   */
  private async follow(start: Work): Promise<FollowOutcome> {
    const work: Work[] = [start];
    const limit = this.chain.historyDepth + this.chain.maxBackfillBlocks + 64;
    try {
      for (let steps = 0; ; steps++) {
        if (this.ledger.haltedReason !== null)
          return { ok: false, kind: 'end', end: { reason: 'halted', message: this.ledger.haltedReason } };
        const next = work.shift();
        if (next === undefined) return { ok: true };
        if (steps >= limit) {
          const message = `the node's chain did not settle within ${limit} steps`;
          return { ok: false, kind: 'retry', provider: 'http', code: 'unsettled', message };
        }
        work.unshift(...(await this.step(next)));
      }
    } catch (error) {
      if (error instanceof RunStop) return { ok: false, kind: 'end', end: error.end };
      if (error instanceof RpcFailure) return { ok: false, kind: 'retry', ...error.error };
      return { ok: false, kind: 'retry', provider: 'follower', code: 'unexpected', message: errorMessage(error) };
    }
  }

  private step(work: Work): Promise<Work[]> {
    switch (work.kind) {
      case 'head':
        return this.head(work.head);
      case 'number':
        return this.number(work.number, work.avoid);
      case 'shorter':
        return this.shorterChain(work.number, work.avoid);
      case 'recheck':
        return this.recheckTip(work.tip);
      case 'written':
        return this.writeBackfilled(work.headers);
    }
  }

  private async number(number: number, avoid?: string): Promise<Work[]> {
    if (this.ledger.checkpoint !== null && number <= this.ledger.checkpoint.number) return [];
    const block = await this.blockAt(number, avoid);
    return [block === null ? { kind: 'shorter', number, avoid } : { kind: 'head', head: block }];
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
  private async shorterChain(number: number, avoid?: string): Promise<Work[]> {
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema, avoid);
    if (!head.ok) throw new RpcFailure(head.error);
    const block = head.value < number ? await this.blockAt(head.value, avoid) : null;
    if (block === null) throw notKnownYet('eth_getBlockByNumber', toHex(number));
    return [{ kind: 'head', head: block }];
  }

  private async head(head: BlockHeader): Promise<Work[]> {
    const cp = this.ledger.checkpoint;
    if (cp === null) {
      await this.ledger.commit([head], { set: {}, del: [] }, []);
      return [];
    }
    if (this.ledger.hashAt(head.number) === head.hash || (head.number === cp.number && head.hash === cp.hash)) {
      this.events.dedupeHits(this.spec.stream, 'memory', 1);
      // A late duplicate, or the node's chain became shorter than ours and this is its head now.
      return head.number < cp.number && cp.hash !== null ? [{ kind: 'recheck', tip: cp }] : [];
    }
    if (head.number <= cp.number && this.ledger.isBelowHistory(head.number)) {
      // A push older than anything this stream tracks (it was anchored or re-anchored above it,
      // e.g. a late push of the block before the anchor): not this stream's to write or to retract.
      this.events.dedupeHits(this.spec.stream, 'memory', 1);
      return [];
    }
    if (head.number > cp.number + 1) return this.backfill(cp.number + 1, head.number - 1, head);
    if (cp.hash === null && head.number === cp.number + 1) {
      await this.ledger.commit([head], { set: {}, del: [] }, []);
      return [];
    }
    // A head that does not extend the checkpoint is a reorg only if the node still calls it
    // canonical: a push queued before a reorg arrives after it with a hash that is already gone,
    // and following it would flip the stream back to a dead branch. Such a head is replaced by
    // the block the node now has at that height.
    const current = await this.blockAt(head.number);
    // No block there for a head that extends ours: the node answering HTTP may simply not have it
    // yet (another node pushed it), so the push is retried; taken for a shorter chain, it would
    // wait for the next push. Retried a few times, it is followed by number (followLoop), which
    // looks for a shorter chain. A head that does not extend ours is a reorg's, and a missing one
    // there is the shorter chain the stream must follow back at once.
    if (current === null && head.number === cp.number + 1 && head.parentHash === cp.hash) {
      throw notKnownYet('eth_getBlockByNumber', toHex(head.number));
    }
    if (current?.hash !== head.hash) {
      this.events.dedupeHits(this.spec.stream, 'memory', 1);
      return [current === null ? { kind: 'shorter', number: head.number } : { kind: 'head', head: current }];
    }
    // Walk back from the head until a parent is a block we wrote (bounded by the kept history).
    const branch: BlockHeader[] = [head];
    let tip = head;
    for (;;) {
      const parent = this.ledger.hashAt(tip.number - 1);
      if (parent === tip.parentHash) break;
      if (parent === undefined) {
        await this.historyExhausted(head);
        return [];
      }
      tip = await this.fetchBlock('eth_getBlockByHash', tip.parentHash);
      branch.unshift(tip);
    }
    const ancestor = tip.number - 1;
    if (ancestor === cp.number) await this.ledger.commit(branch, { set: {}, del: [] }, []);
    else await this.ledger.reorg(ancestor, branch);
    return [];
  }

  /** Asks the node whether our tip is still canonical, and follows it if not. */
  private async recheckTip(cp: Checkpoint): Promise<Work[]> {
    const current = await this.blockAt(cp.number);
    if (current?.hash === cp.hash) return [];
    if (current !== null) return [{ kind: 'head', head: current }];
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema);
    if (!head.ok) throw new RpcFailure(head.error);
    const block = head.value < cp.number ? await this.blockAt(head.value) : null;
    if (block === null) throw notKnownYet('eth_getBlockByNumber', toHex(cp.number));
    // The node's head is a block we wrote: everything above it is retracted, with no new branch.
    if (this.ledger.hashAt(block.number) !== block.hash) return [{ kind: 'head', head: block }];
    await this.ledger.reorg(block.number, []);
    return [];
  }

  /** A head whose ancestry leaves the kept history: the stream cannot retract exactly. */
  private async historyExhausted(head: BlockHeader): Promise<void> {
    const from = Math.max(0, head.number - this.chain.historyDepth);
    if (await this.ledger.discontinuity(from, head.number - 1, 'history_exhausted'))
      await this.ledger.commit([head], { set: {}, del: [] }, []);
  }

  /** Fills `from`..`to` over HTTP (bounded by maxBackfillBlocks), then `head` follows. */
  private async backfill(from: number, to: number, head: BlockHeader): Promise<Work[]> {
    let start = from;
    if (to - from + 1 > this.chain.maxBackfillBlocks) {
      start = to - this.chain.maxBackfillBlocks + 1;
      // Strict reports the whole hole it refuses to paper over; best effort fills the newest part.
      if (!(await this.ledger.discontinuity(from, this.spec.continuity === 'strict' ? to : start - 1, 'backfill_limit'))) return [];
    }
    const started = this.clock.now();
    const headers: BlockHeader[] = [];
    for (let n = start; n <= to; n += 8) {
      const batch = await Promise.all(Array.from({ length: Math.min(8, to - n + 1) }, (_, i) => this.blockAt(n + i)));
      const missing = batch.findIndex((b) => b === null);
      // The node's chain no longer reaches this head: the stream follows its new head instead.
      if (missing >= 0) return [{ kind: 'shorter', number: n + missing }];
      headers.push(...batch.filter((b) => b !== null));
    }
    if (this.spec.kind === 'logs') {
      const fetched = await this.logs.forRange(start, to);
      this.ledger.prefetch(fetched.logs, headers, new Set(fetched.refusedBlocks));
    }
    const fetchedMs = this.clock.now() - started;
    const rest = await this.writeBackfilled(headers);
    this.events.backfill(this.spec.stream, to - start + 1, fetchedMs, this.clock.now() - started - fetchedMs);
    return [...rest, { kind: 'head', head }];
  }

  /**
   * Writes fetched blocks in atomic steps of up to 100 while each links to the one before it;
   * a block that does not (the chain moved during the backfill) is followed as a head, and the
   * blocks after it are written once it was.
   */
  private async writeBackfilled(headers: readonly BlockHeader[]): Promise<Work[]> {
    let i = 0;
    while (i < headers.length) {
      const chunk: BlockHeader[] = [];
      let prevNumber = this.ledger.checkpoint?.number ?? -1;
      let prevHash = this.ledger.checkpoint?.hash ?? null;
      for (let h = headers[i]; h !== undefined && chunk.length < 100; h = headers[i]) {
        if (h.number !== prevNumber + 1 || (prevHash !== null && h.parentHash !== prevHash)) break;
        chunk.push(h);
        prevNumber = h.number;
        prevHash = h.hash;
        i++;
      }
      if (chunk.length > 0) {
        await this.ledger.commit(chunk, { set: {}, del: [] }, []);
        continue;
      }
      const next = headers[i];
      if (next === undefined) break;
      const rest = headers.slice(i + 1);
      return rest.length > 0
        ? [
            { kind: 'head', head: next },
            { kind: 'written', headers: rest },
          ]
        : [{ kind: 'head', head: next }];
    }
    this.ledger.clearPrefetched();
    return [];
  }

  private async fetchBlock(method: string, param: string): Promise<BlockHeader> {
    const result = await this.pool.call(method, [param, false], blockHeaderSchema.nullable());
    if (!result.ok) throw new RpcFailure(result.error);
    if (result.value === null) throw notKnownYet(method, param);
    return result.value;
  }
}

/** A block the node does not have (yet, or any more): retried after a backoff like any upstream failure. */
function notKnownYet(method: string, param: string): RpcFailure {
  return new RpcFailure({
    code: 'rpc_error',
    retryable: true,
    provider: 'http',
    message: `${method}(${param}) is not known yet`,
    rpcCode: 0,
  });
}
