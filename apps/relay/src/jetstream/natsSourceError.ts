import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { SourceError } from '../core/StreamSource.js';

/** Normalises whatever a promise rejected with; the NATS clients reject with Errors, but the type says unknown. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

/** The JetStream stream itself does not exist (never created, or deleted): an answer, not a failure. */
export function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/**
 * The core's view of a failed JetStream request: a subject always holds a stream, so nothing is
 * the caller's fault (no `source_wrong_type`); a timeout, a lost connection or an API error is
 * retried.
 */
export function natsSourceError(error: Error): SourceError {
  return { code: 'source_unavailable', retryable: true, message: error.message };
}
