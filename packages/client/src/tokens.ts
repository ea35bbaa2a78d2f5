import { streamNameSchema } from '@streamgate/protocol';
import type { RelaySubscription, StreamName } from '@streamgate/protocol';
import type { ClientError } from './types.js';

/**
 * The client's renewal window closes this long before a token's expiry (the lead of the
 * protocol's `tokenRefreshWindow`, capped at half the lifetime), and a cached token this close
 * to expiry is always replaced before it is used to (re)subscribe.
 */
export const TOKEN_RENEW_MARGIN_MS = 30_000;

export type TokenCheck = { ok: true; token: RelaySubscription<unknown> } | { ok: false; error: ClientError };

/**
 * `getToken()` results come over the network from a product backend, so they are checked here
 * like any other input, not trusted for their static type.
 */
export function checkToken(value: unknown, expectedStream?: StreamName): TokenCheck {
  const invalid = (message: string): TokenCheck => ({
    ok: false,
    error: { code: 'token_response_invalid', retryable: false, message },
  });
  if (typeof value !== 'object' || value === null) return invalid('getToken() did not return an object');
  const { token, stream, expiresAt } = value as Record<string, unknown>;
  if (typeof token !== 'string' || token.length === 0) return invalid('token: must be a non-empty string');
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return invalid('expiresAt: must be a number');
  const name = streamNameSchema.safeParse(stream);
  if (!name.success) return invalid(`stream: ${name.error.issues[0]?.message ?? 'invalid'}`);
  if (expectedStream !== undefined && name.data !== expectedStream) {
    return invalid(`token is for stream "${name.data}", expected "${expectedStream}"`);
  }
  return { ok: true, token: { token, stream: name.data, expiresAt } };
}

export function expiresSoon(expiresAt: number, now: number = Date.now()): boolean {
  return expiresAt - now < TOKEN_RENEW_MARGIN_MS;
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Statuses of a 4xx answer that asking again can change: a timeout, a rate limit, a cancelled request. */
const RETRYABLE_CLIENT_STATUSES = new Set([408, 425, 429, 499]);

/**
 * A `getToken()` that threw. The backend's refusal (a tRPC `FORBIDDEN` from `authorize`,
 * `UNAUTHORIZED`, `BAD_REQUEST`: any 4xx but a timeout or rate limit) is final: asking again
 * gets the same answer, so the subscription ends. Anything else (the network, a 5xx, an error
 * with no status) is retried with backoff. The status is read where a tRPC client error keeps
 * it (`data.httpStatus`), or from a `status` of the app's own error; `retryable: false` on the
 * error ends it too.
 */
export function tokenFetchError(error: unknown): ClientError {
  const message = describeError(error);
  return { code: 'token_fetch_failed', retryable: !isFinalRefusal(error), message };
}

function isFinalRefusal(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { data, status, retryable } = error as { data?: unknown; status?: unknown; retryable?: unknown };
  if (retryable === false) return true;
  const httpStatus = typeof data === 'object' && data !== null ? (data as { httpStatus?: unknown }).httpStatus : undefined;
  const code = typeof httpStatus === 'number' ? httpStatus : typeof status === 'number' ? status : undefined;
  return code !== undefined && code >= 400 && code < 500 && !RETRYABLE_CLIENT_STATUSES.has(code);
}
