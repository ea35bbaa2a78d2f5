import type { IngestLogEvent } from '@streamgate/ingest-events';

/** Hooks for metrics and logs from one EVM stream run. */
export interface EvmRunEvents {
  failover(stream: string, from: string, to: string | null, durationMs: number, reason: string): void;
  /** Back on the preferred provider after the hold-down; `durationMs` is the make-before-break switch. */
  failback(stream: string, from: string, to: string, durationMs: number): void;
  /** After a backfill: how many blocks, time spent fetching them and writing them. */
  backfill(stream: string, blocks: number, fetchMs: number, writeMs: number): void;
  degraded(stream: string, on: boolean): void;
  gap(stream: string, fromBlock: number, toBlock: number, policy: string): void;
  reorg(stream: string, depth: number): void;
  /** `memory`: a hash seen in this run; `log`: the write's own dedupe id, in Redis or JetStream. */
  dedupeHits(stream: string, where: 'memory' | 'log', count: number): void;
  written(stream: string, count: number): void;
  providerError(provider: string, code: string, message: string): void;
  stateChanged(stream: string, state: FailoverState): void;
}

export type FailoverState = 'connecting' | 'active' | 'backfilling' | 'switching' | 'degraded';

/** What the history keeps per block: enough to detect a fork and retract what was written. */
export interface BlockRecord {
  hash: string;
  parentHash: string;
  logs?: IngestLogEvent[];
}

export interface Checkpoint {
  number: number;
  /** null right after a gap: the next block is accepted without a parent check. */
  hash: string | null;
}
