import type { RunEnd } from '@streamgate/ingest-core';

/** How one walk of the chain follower ended: followed, to be retried later, or the run must end. */
export type FollowOutcome =
  | { readonly ok: true }
  /** Upstream trouble (or a height not served yet): the same item is retried after a backoff. */
  | { readonly ok: false; readonly kind: 'retry'; readonly provider: string; readonly code: string; readonly message: string }
  /** Fenced, halted by strict continuity, stopped, or a write that cannot succeed. */
  | { readonly ok: false; readonly kind: 'end'; readonly end: RunEnd };
