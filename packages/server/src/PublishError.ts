/**
 * Whether a failed publish may still have written its entry. `unknown`: the command reached the
 * connection, and Redis may have applied it even though no reply came back (a timeout, a dropped
 * connection). `no`: Redis did not apply it. A retry without an idempotency key after `unknown`
 * can write the entry twice; with the same key it cannot.
 */
export type PublishWritten = 'no' | 'unknown';

export type PublishError =
  /** The stream reference is not a valid stream name, or cannot take idempotent publishes. */
  | { code: 'stream_invalid'; retryable: false; field: 'stream'; message: string }
  /** `field` is `payload` or `payload.<path>` for the first schema issue. */
  | { code: 'payload_invalid'; retryable: false; field: string; message: string }
  /** The payload's JSON is `bytes` long in UTF-8, above `limitBytes` (MAX_ENTRY_DATA_BYTES); nothing was sent. */
  | { code: 'payload_too_large'; retryable: false; field: 'payload'; bytes: number; limitBytes: number; message: string }
  | { code: 'idempotency_key_invalid'; retryable: false; field: 'idempotencyKey'; message: string }
  /** No reply within the publisher's `timeoutMs` after the command was sent. */
  | { code: 'timeout'; retryable: true; written: 'unknown'; message: string }
  /** No connection within `timeoutMs` (`written: 'no'`), or it broke under the command, or Redis cannot take writes now. */
  | { code: 'redis_unavailable'; retryable: true; written: PublishWritten; message: string }
  /** Redis refused this write for good (e.g. the key holds another type); retrying will not help. */
  | { code: 'redis_rejected'; retryable: false; written: PublishWritten; message: string }
  /** `waitForReplicas` is not `{ count: 1…, timeoutMs: 1… }` below the publisher's `timeoutMs`. */
  | { code: 'options_invalid'; retryable: false; field: 'waitForReplicas'; message: string }
  /**
   * The entry was written on the primary as `id` (`duplicate` as in a success), but fewer than the
   * `wanted` replicas acknowledged it within the wait (`replicas` did). If that primary fails now,
   * the promoted replica may not hold the entry. Retry with the same idempotencyKey: the retry
   * answers `duplicate` if the entry is there, and writes it once if it was lost; a retry without
   * a key can leave the entry twice.
   */
  | {
      code: 'not_replicated';
      retryable: true;
      written: 'unknown';
      id: string;
      duplicate: boolean;
      replicas: number;
      wanted: number;
      message: string;
    }
  /** publisher.close() was called, or the client it was made from has ended. */
  | { code: 'closed'; retryable: false; written: PublishWritten; message: string };

export type PublishErrorCode = PublishError['code'];

/**
 * `id` is the position clients resume from: the Redis stream id of the entry, or on a JetStream
 * target `0-<stream sequence>` (docs/protocol.md §17). `duplicate` is true when the idempotency
 * key had already written an entry within the window: `id` is that entry's, and nothing new was
 * written.
 */
export type PublishResult = { ok: true; id: string; duplicate: boolean } | { ok: false; error: PublishError };

// Error codes (a RESP error's first word) meaning "the server cannot take writes right now"
// rather than "this write is wrong"; the server did not apply the command. MOVED and ASK reach
// here only when a Cluster's slot moved under the publish more often than it follows.
const TRANSIENT_REPLY_CODES = new Set(['LOADING', 'BUSY', 'TRYAGAIN', 'MASTERDOWN', 'READONLY', 'CLUSTERDOWN', 'OOM', 'MOVED', 'ASK']);

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Classifies a rejection of a command that was handed to a ready connection. */
export function classifySentCommandError(error: unknown): PublishError {
  const message = errorText(error);
  // ioredis names server replies "ReplyError"; any other rejection is the connection.
  if (error instanceof Error && error.name === 'ReplyError') {
    const code = message.split(' ', 1)[0] ?? '';
    if (TRANSIENT_REPLY_CODES.has(code)) {
      return { code: 'redis_unavailable', retryable: true, written: 'no', message: `redis cannot take writes now: ${message}` };
    }
    return { code: 'redis_rejected', retryable: false, written: 'no', message: `redis refused the entry: ${message}` };
  }
  return {
    code: 'redis_unavailable',
    retryable: true,
    written: 'unknown',
    message: `the connection failed under the command, which may have been applied: ${message}`,
  };
}

/** The refusal of an idempotency key parseIdempotencyKey found bad, as both writers answer it. */
export function idempotencyKeyError(reason: string): Extract<PublishError, { code: 'idempotency_key_invalid' }> {
  return { code: 'idempotency_key_invalid', retryable: false, field: 'idempotencyKey', message: `idempotencyKey ${reason}` };
}
