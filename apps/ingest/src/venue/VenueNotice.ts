import type { VenueKind } from './venueSchemas.js';

/**
 * Facts a consumer can act on, written to the venue's control stream. Each is emitted on a change
 * (a transition, a new refusal), never repeated per tick, so the stream stays readable.
 */
export type VenueNotice =
  | { type: 'coverage'; wanted: number; covered: number; byKind: Record<VenueKind, number> }
  | { type: 'refusal'; symbols: string[]; until: number; reason: 'invalid_symbol' }
  | { type: 'refusal_expired'; symbols: string[] }
  | { type: 'capacity'; symbols: string[]; sessions: number; ceiling: number }
  | { type: 'ceiling_lowered'; ceiling: number }
  | { type: 'reassert_failing'; shard: number; reason: string }
  | { type: 'reassert_recovered'; shard: number; failures: number }
  | { type: 'shard_crashed'; shard: number; reason: string }
  /** The venue refused a session's CONNECT for a reason about the client, not the key, that will not clear by itself (judgeConnack); the session keeps redialling. */
  | { type: 'session_refused'; shard: number; reason: string }
  /** The venue refused the app key (HTTP INVALID_APP_KEY or CONNACK 4): the feed stopped for good (until a restart with another key). */
  | { type: 'app_key_refused'; shard: number; reason: string }
  /** The venue numbers a symbol's kind from a lower `seq` again, later in time (a venue restart). */
  | { type: 'sequence_restart'; symbol: string; kind: VenueKind; fromSeq: number; toSeq: number; epoch: number };
