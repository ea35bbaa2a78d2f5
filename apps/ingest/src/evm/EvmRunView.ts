import type { FailoverState } from './evmEvents.js';

/** Where one EVM stream run stands, read once a second for the operations snapshot. */
export interface EvmRunView {
  readonly state: FailoverState;
  /** The provider whose newHeads subscription is live, null while none is (switching, degraded). */
  readonly provider: string | null;
  /** The WebSocket provider the run prefers (lowest priority) and returns to after the hold-down. */
  readonly preferredProvider: string | null;
  /** Whether the live subscription is on the preferred provider. */
  readonly onPreferred: boolean;
  /** Highest block the run knows the chain has (oracle, pushes, what it wrote), null before any. */
  readonly head: number | null;
  /** The stream's checkpoint: the highest block written (or skipped by a gap), null before any. */
  readonly lastWritten: number | null;
}
