import type { IngestError } from './IngestError.js';
import type { WriteBatch, WriteOutcome } from './StreamWriter.js';

/** What the core hands an adapter for one owned key. */
export interface RunContext {
  readonly key: string;
  /** The adapter's state as last written atomically with the stream (checkpoint, history). */
  readonly state: ReadonlyMap<string, string>;
  /**
   * The only way to write: fenced by the lease, deduplicated, atomic with the state change.
   * After a refusal (`fenced`, `stopped`) the run must end; the core also aborts `signal`.
   */
  write(batch: WriteBatch): Promise<WriteOutcome>;
  readonly signal: AbortSignal;
}

export type RunEnd =
  | { reason: 'stopped' }
  | { reason: 'fenced' }
  /** The adapter wrote an explicit stream error and will not continue without an operator. */
  | { reason: 'halted'; message: string }
  /** `retryAfterMs`: when to try this key again, instead of the worker's growing backoff. */
  | { reason: 'failed'; error: IngestError; retryAfterMs?: number };

export interface AdapterRun {
  /** Ends the upstream subscription; resolves once nothing more will be written. */
  stop(): Promise<void>;
  readonly ended: Promise<RunEnd>;
}

/**
 * One kind of upstream (EVM chains, a market-data venue…). The core owns leases, demand and the
 * atomic writer; the adapter owns everything upstream of a write, and may share connections
 * across the keys it runs (e.g. several keys on one session) as long as each key writes alone.
 */
export interface UpstreamAdapter {
  readonly kind: string;
  start(ctx: RunContext): AdapterRun;
}
