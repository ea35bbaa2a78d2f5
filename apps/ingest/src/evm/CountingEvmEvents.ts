import type { EvmRunEvents, FailoverState } from './evmEvents.js';

/** What one stream went through since the process started, across all its runs (lease hand-overs included). */
export interface EvmStreamCounts {
  readonly failovers: number;
  readonly gaps: number;
  readonly reorgs: number;
}

/**
 * Passes every event of one stream's runs on, counting failovers, gaps and reorgs on the way:
 * the operations snapshot shows these counts, and the Prometheus counters that also see them
 * are not read back (their text is for scrapers, not for the process itself).
 */
export class CountingEvmEvents implements EvmRunEvents {
  #failovers = 0;
  #gaps = 0;
  #reorgs = 0;

  constructor(private readonly next: EvmRunEvents) {}

  get counts(): EvmStreamCounts {
    return { failovers: this.#failovers, gaps: this.#gaps, reorgs: this.#reorgs };
  }

  failover(stream: string, from: string, to: string | null, durationMs: number, reason: string): void {
    this.#failovers++;
    this.next.failover(stream, from, to, durationMs, reason);
  }

  failback(stream: string, from: string, to: string, durationMs: number): void {
    this.next.failback(stream, from, to, durationMs);
  }

  backfill(stream: string, blocks: number, fetchMs: number, writeMs: number): void {
    this.next.backfill(stream, blocks, fetchMs, writeMs);
  }

  degraded(stream: string, on: boolean): void {
    this.next.degraded(stream, on);
  }

  gap(stream: string, fromBlock: number, toBlock: number, policy: string): void {
    this.#gaps++;
    this.next.gap(stream, fromBlock, toBlock, policy);
  }

  reorg(stream: string, depth: number): void {
    this.#reorgs++;
    this.next.reorg(stream, depth);
  }

  dedupeHits(stream: string, where: 'memory' | 'log', count: number): void {
    this.next.dedupeHits(stream, where, count);
  }

  written(stream: string, count: number): void {
    this.next.written(stream, count);
  }

  providerError(provider: string, code: string, message: string): void {
    this.next.providerError(provider, code, message);
  }

  stateChanged(stream: string, state: FailoverState): void {
    this.next.stateChanged(stream, state);
  }
}
