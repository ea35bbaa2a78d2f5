/**
 * What a caller of the venue feed gets back. Every call is answered before its own timeout:
 * `reconcile_pending` and `connack_timeout` mean "accepted, still working", not "failed" — the
 * work carries on and coverage shows when it lands.
 */
export type FeedError =
  /** The argument itself is unusable; nothing changed. */
  | { code: 'invalid_symbols'; retryable: false; symbols: unknown; message: string }
  /** The venue refused these symbols; they are excluded until `until` and retried then. */
  | { code: 'symbols_refused'; retryable: false; symbols: string[]; until: number; message: string }
  /** Every session the key allows is full at the venue's measured ceiling. */
  | { code: 'capacity'; retryable: false; symbols: string[]; message: string }
  /**
   * The venue refused the app key (HTTP INVALID_APP_KEY, or CONNACK return code 4): final for this feed, which sends
   * nothing more. Names the venue, never the key; a corrected key takes a restart.
   */
  | { code: 'app_key_refused'; retryable: false; venue: string; message: string }
  | { code: 'reconcile_pending'; retryable: true; ms: number; message: string }
  | { code: 'connack_timeout'; retryable: true; ms: number; message: string }
  | { code: 'shard_crashed'; retryable: true; message: string }
  | { code: 'closed'; retryable: false; message: string };

export type FeedAnswer = { ok: true } | { ok: false; error: FeedError };

/** The text every report of a refused app key carries (the feed's answers, the adapter's run ends): the venue, never the key. */
export function appKeyRefusedMessage(venue: string, reason: string): string {
  return `venue ${venue} refused its app key (${reason}): fix appKey in the topology and restart the worker`;
}
