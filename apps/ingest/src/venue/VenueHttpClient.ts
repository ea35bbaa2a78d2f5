import { z } from 'zod';
import { errorMessage } from '@streamgate/ingest-core';
import type { RateLimiter } from './RateLimiter.js';
import { RateLimiterAbortError } from './RateLimiter.js';
import { subTypeOf, venueKinds, venueOkSchema, venueRefusalCodes, venueRefusalSchema } from './venueSchemas.js';
import type { VenueKind } from './venueSchemas.js';

/**
 * Why a subscribe/unsubscribe did not take. `retryable` answers "may the same call, unchanged,
 * succeed later?": a refusal naming symbols or a ceiling needs a different call, and an
 * INVALID_SESSION needs a new session first.
 */
export type VenueCallError =
  | { code: 'invalid_session'; retryable: false; message: string }
  | { code: 'too_many_symbols'; retryable: false; limit: number; message: string }
  | { code: 'invalid_symbols'; retryable: false; symbols: string[]; message: string }
  /** INVALID_APP_KEY: no call with this key can succeed until the key itself is changed. */
  | { code: 'invalid_app_key'; retryable: false; status: number; message: string }
  | { code: 'venue_rate_limited'; retryable: true; message: string }
  | { code: 'local_rate_limited'; retryable: true; message: string }
  /** Any other non-2xx; `venueCode` when the venue named one (INVALID_PARAMETER, INTERNAL). */
  | { code: 'http_error'; retryable: boolean; status: number; venueCode?: string; message: string }
  | { code: 'transport'; retryable: true; message: string }
  | { code: 'timeout'; retryable: true; message: string }
  | { code: 'aborted'; retryable: false; message: string }
  | { code: 'garbage'; retryable: true; message: string };

export type VenueCallResult = { ok: true } | { ok: false; error: VenueCallError };

export interface VenueHttpClientOptions {
  baseUrl: string;
  appKey: string;
  /** Shared by every call made with this app key: the venue limits per key, not per session. */
  limiter: RateLimiter;
  /** sub_types a subscribe asks for when the call does not say; default all three. */
  kinds?: readonly VenueKind[];
}

export interface VenueCallOptions {
  signal?: AbortSignal;
  /**
   * `check` fails fast with `local_rate_limited` (a caller who is waiting on the answer);
   * `acquire` queues for a token (timers nobody waits on — see RateLimiter).
   */
  limiter: 'acquire' | 'check';
  /** Deadline for the HTTP exchange itself, counted from when the token is held. */
  timeoutMs: number;
}

type Op = 'subscribe' | 'unsubscribe';

const codeOnlySchema = z.object({ code: z.string() });

/** The venue's subscription API: every answer parsed, every failure a typed value, never a throw. */
export class VenueHttpClient {
  private readonly baseUrl: string;
  private readonly appKey: string;
  private readonly limiter: RateLimiter;
  private readonly kinds: readonly VenueKind[];

  constructor({ baseUrl, appKey, limiter, kinds = venueKinds }: VenueHttpClientOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.appKey = appKey;
    this.limiter = limiter;
    this.kinds = kinds;
  }

  /** Adds `symbols` × `kinds` (undefined: the client's kinds) to the session; the venue's union is additive. */
  subscribe(
    sessionId: string,
    symbols: readonly string[],
    kinds: readonly VenueKind[] | undefined,
    opts: VenueCallOptions,
  ): Promise<VenueCallResult> {
    const subTypes = (kinds ?? this.kinds).map(subTypeOf);
    return this.call('subscribe', { session_id: sessionId, symbols, sub_types: subTypes }, symbols.length, opts);
  }

  /** Removes `symbols`; with `kinds` undefined, every kind (sub_types omitted), so nothing is left behind. */
  unsubscribe(
    sessionId: string,
    symbols: readonly string[],
    kinds: readonly VenueKind[] | undefined,
    opts: VenueCallOptions,
  ): Promise<VenueCallResult> {
    const body =
      kinds === undefined ? { session_id: sessionId, symbols } : { session_id: sessionId, symbols, sub_types: kinds.map(subTypeOf) };
    return this.call('unsubscribe', body, symbols.length, opts);
  }

  private async call(op: Op, body: object, count: number, opts: VenueCallOptions): Promise<VenueCallResult> {
    // Nothing to change: spending a token (and risking INVALID_PARAMETER on an empty list) buys nothing.
    if (count === 0) return { ok: true };
    const { signal, timeoutMs } = opts;
    if (signal?.aborted === true) return failure({ code: 'aborted', retryable: false, message: `${op}: aborted before sending` });
    if (opts.limiter === 'check') {
      if (!this.limiter.tryTake()) {
        return failure({
          code: 'local_rate_limited',
          retryable: true,
          message: `${op}: throttled by our own rate limiter (not the venue); not sent`,
        });
      }
    } else {
      try {
        await this.limiter.acquire(signal);
      } catch (error) {
        if (error instanceof RateLimiterAbortError)
          return failure({ code: 'aborted', retryable: false, message: `${op}: aborted while waiting for a rate-limit token` });
        throw error;
      }
    }

    const deadline = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await fetch(`${this.baseUrl}/v1/market-data/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-app-key': this.appKey },
        body: JSON.stringify(body),
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
      });
      status = response.status;
      // The deadline covers the body too: a venue that sends headers and stalls is still a timeout.
      text = await response.text();
    } catch (error) {
      // Caller first: an abort that races the deadline is the caller's decision, not a slow venue.
      if (isAborted(signal)) return failure({ code: 'aborted', retryable: false, message: `${op}: aborted in flight` });
      if (deadline.aborted) return failure({ code: 'timeout', retryable: true, message: `${op}: no answer within ${timeoutMs} ms` });
      const cause = error instanceof Error && error.cause !== undefined ? ` (${errorMessage(error.cause)})` : '';
      return failure({ code: 'transport', retryable: true, message: `${op}: ${errorMessage(error)}${cause}` });
    }
    return mapAnswer(op, status, text);
  }
}

/** A function, not an inline check: the signal changes across awaits, which property narrowing cannot see. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function failure(error: VenueCallError): VenueCallResult {
  return { ok: false, error };
}

function mapAnswer(op: Op, status: number, text: string): VenueCallResult {
  let json: unknown;
  let isJson = true;
  try {
    json = JSON.parse(text);
  } catch {
    isJson = false;
  }
  const snippet = text.slice(0, 80);

  if (status >= 200 && status < 300) {
    if (isJson && venueOkSchema.safeParse(json).success) return { ok: true };
    return failure({ code: 'garbage', retryable: true, message: `${op}: ${status} without {"ok":true}: ${snippet}` });
  }
  // A 429 means slow down whoever sent it (venue or a proxy in front of it), body or not.
  if (status === 429) return failure({ code: 'venue_rate_limited', retryable: true, message: `${op}: venue answered 429` });

  const named = codeOnlySchema.safeParse(json);
  const venueCode = isJson && named.success ? named.data.code : undefined;
  if (venueCode === undefined || !venueRefusalCodes.has(venueCode)) {
    // Not one of the venue's own refusals (e.g. a proxy's HTML 502): the status is all we know.
    return failure({ code: 'http_error', retryable: retryableStatus(status), status, message: `${op}: HTTP ${status}: ${snippet}` });
  }
  const refusal = venueRefusalSchema.safeParse(json);
  if (!refusal.success) {
    return failure({ code: 'garbage', retryable: true, message: `${op}: ${venueCode} without the fields it must carry: ${snippet}` });
  }
  const r = refusal.data;
  switch (r.code) {
    case 'INVALID_SESSION':
      return failure({ code: 'invalid_session', retryable: false, message: `${op}: venue does not know this session (INVALID_SESSION)` });
    case 'INVALID_SYMBOL':
      return failure({
        code: 'invalid_symbols',
        retryable: false,
        symbols: r.symbols,
        message: `${op}: venue refused ${r.symbols.length} symbol(s): ${r.symbols.slice(0, 10).join(', ')}`,
      });
    case 'TOO_MANY_SYMBOLS_SUBSCRIPTION':
      return failure({
        code: 'too_many_symbols',
        retryable: false,
        limit: r.limit,
        message: `${op}: over the session's ceiling of ${r.limit} symbols`,
      });
    case 'TOO_MANY_REQUESTS':
      return failure({
        code: 'venue_rate_limited',
        retryable: true,
        message: `${op}: venue rate limit (TOO_MANY_REQUESTS, HTTP ${status})`,
      });
    case 'INVALID_APP_KEY':
      // The message names neither the key nor the venue's text about it: it ends up in logs and notices.
      return failure({
        code: 'invalid_app_key',
        retryable: false,
        status,
        message: `${op}: venue refused the app key (HTTP ${status} INVALID_APP_KEY)`,
      });
    case 'INVALID_PARAMETER':
    case 'INTERNAL':
      return failure({
        code: 'http_error',
        retryable: retryableStatus(status),
        status,
        venueCode: r.code,
        message: `${op}: HTTP ${status} ${r.code}${r.message === undefined ? '' : `: ${r.message}`}`,
      });
  }
}

/** Server-side trouble may pass; a 4xx says the request itself is wrong and will stay wrong. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408;
}
