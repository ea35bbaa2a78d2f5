import * as z from 'zod/mini';

/**
 * Codes carried by `error` frames. Each is either about one subscription (the frame names its
 * `sid`) or about a frame the server could not use. `retryable` tells a client whether the same
 * request may succeed later without a new token.
 */
export const errorCodes = {
  // Token problems: a new token is needed, so never retryable as is.
  token_missing: false,
  token_malformed: false,
  token_algorithm_not_allowed: false,
  token_signature_invalid: false,
  token_kid_unknown: false,
  token_expired: false,
  token_not_yet_valid: false,
  token_audience_invalid: false,
  token_issuer_invalid: false,
  token_claims_invalid: false,
  redis_not_allowed: false,
  token_subject_mismatch: false,
  token_stream_mismatch: false,
  // The issuer revoked this subject's or stream's tokens issued before a moment (docs §10):
  // a token issued after the revocation is needed.
  revoked: false,
  // The relay could not fetch its signing keys right now.
  jwks_unavailable: true,
  // Frame problems: the frame is dropped, the connection stays.
  frame_not_json: false,
  frame_invalid: false,
  frame_unknown_op: false,
  frame_binary: false,
  frame_too_large: false,
  // Subscription bookkeeping.
  too_many_subscriptions: false,
  duplicate_subscription: false,
  duplicate_stream: false,
  unknown_subscription: false,
  // Redis could not be read; the relay keeps trying and the client may resubscribe.
  stream_unavailable: true,
  // A refresh named the same stream on another Redis target (placement changed): the client
  // subscribes again, with the new token, from its last id.
  stream_moved: true,
  // Entries after the client's position were trimmed while the relay was catching it up; a new
  // subscribe from the same position is answered with the honest recovery outcome (`truncated`).
  history_trimmed: true,
  internal: true,
} as const satisfies Record<string, boolean>;

export type ErrorCode = keyof typeof errorCodes;
export const errorCodeSchema = z.enum(Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]]);

/** The error value that crosses package boundaries: a discriminated union on `code`. */
export type RelayError = { code: ErrorCode; retryable: boolean; message: string };

export function relayError(code: ErrorCode, message: string): RelayError {
  return { code, retryable: errorCodes[code], message };
}
