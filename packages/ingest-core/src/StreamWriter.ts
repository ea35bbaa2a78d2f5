import type { IngestError } from './IngestError.js';

/**
 * One entry for the stream. `dedupeId` names one write: an entry offered again with the same id
 * within the dedupe TTL is skipped. An adapter whose stream can legitimately carry the same
 * event twice (a log written again after its retraction) must make the id tell those writes
 * apart, e.g. by its position in the stream, kept in the state written in the same step.
 */
export interface WriteEntry {
  readonly dedupeId: string;
  /** JSON text for the entry's `data` field. */
  readonly data: string;
}

/**
 * Everything one atomic step writes: entries (each skipped if its dedupe id was seen) and the
 * adapter's state changes (its checkpoint and recent history), which land even when every entry
 * was a duplicate, so a resumed owner never replays work the stream already holds.
 */
export interface WriteBatch {
  readonly entries: readonly WriteEntry[];
  readonly stateSet?: Readonly<Record<string, string>>;
  readonly stateDel?: readonly string[];
}

export type WriteOutcome =
  { ok: true; written: number; duplicates: number; ids: readonly (string | null)[] } | { ok: false; error: IngestError };

/** The fencing token a lease granted; writes carrying an older token are refused. */
export interface Fence {
  readonly key: string;
  readonly token: number;
}

/** The atomic write step (fencing check, dedupe, XADD, state update) and its state read. */
export interface StreamWriter {
  write(fence: Fence, batch: WriteBatch): Promise<WriteOutcome>;
  /**
   * The adapter state last written for `fence.key` (empty for a new stream), read by the owner
   * `fence` names right after its lease was granted. A log that cannot see lease grants (JetStream:
   * leases stay in Redis) claims the key for `fence.token` here, so that no older owner's step
   * lands after the state was read. Throws an IngestFailure (`fenced`: a newer owner wrote).
   */
  loadState(fence: Fence): Promise<Map<string, string>>;
}
