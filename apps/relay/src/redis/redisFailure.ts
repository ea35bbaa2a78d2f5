import type { SourceError } from '../core/StreamSource.js';

/**
 * What went wrong with a Redis command, by what Redis said rather than by the wording of a
 * message: a reply error carries its code as the first word (`WRONGTYPE`, `LOADING`, `NOSCRIPT`,
 * `ERR`, …); anything else (closed or timed-out connection, retries exhausted) never reached an
 * answer from the server.
 */
export type RedisFailure = { readonly kind: 'reply'; readonly code: string } | { readonly kind: 'connection' };

/** Normalises whatever a promise rejected with; ioredis rejects with Errors, but the type says unknown. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

export function redisFailure(error: Error): RedisFailure {
  // ioredis hands the server's error replies on as redis-errors' ReplyError (its export is untyped).
  if (error.name !== 'ReplyError') return { kind: 'connection' };
  const space = error.message.indexOf(' ');
  return { kind: 'reply', code: space === -1 ? error.message : error.message.slice(0, space) };
}

export function isWrongType(error: Error): boolean {
  const failure = redisFailure(error);
  return failure.kind === 'reply' && failure.code === 'WRONGTYPE';
}

/** The core's view: only a key of another type is the caller's problem; the rest is retried. */
export function sourceError(error: Error): SourceError {
  if (isWrongType(error)) return { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' };
  return { code: 'source_unavailable', retryable: true, message: error.message };
}
