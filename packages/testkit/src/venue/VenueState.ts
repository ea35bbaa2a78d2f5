import { TokenBucket } from './TokenBucket.js';
import type { VenueRateLimit } from './TokenBucket.js';
import { VENUE_SYMBOL_PATTERN } from './venueKinds.js';

export interface VenueStateOptions {
  symbolCeiling: number;
  unknownSymbols: readonly string[];
  rateLimit: VenueRateLimit | null;
}

function assertMs(name: string, ms: number): void {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`${name} must be a finite number >= 0, got ${ms}`);
}

/**
 * The venue's adjustable rules, read by the HTTP side at each call and by the broker at each
 * CONNECT. Faults that touch a connection live with the broker; everything here is a number or
 * a list a test turns up and down.
 */
export class VenueState {
  private unknown: Set<string>;
  private ceiling: number;
  private stated: number | undefined;
  private responseDelay = { subscribe: 0, unsubscribe: 0 };
  private connackDelay = 0;
  /** Per app key, the return code its later CONNECTs get whatever else holds. */
  private connectRefusals = new Map<string, number>();
  private failures = { remaining: 0, status: 503 };
  private limit: VenueRateLimit | null;
  /** One bucket per app key: the venue limits each customer, not itself. */
  private buckets = new Map<string, TokenBucket>();

  constructor(options: VenueStateOptions) {
    this.unknown = new Set(options.unknownSymbols);
    this.ceiling = 0;
    this.limit = null;
    this.setSymbolCeiling(options.symbolCeiling);
    this.setRateLimit(options.rateLimit);
  }

  /** Whether the venue carries `symbol` right now: well-formed and not declared unknown. */
  lists(symbol: string): boolean {
    return VENUE_SYMBOL_PATTERN.test(symbol) && !this.unknown.has(symbol);
  }

  /** What a TOO_MANY_SYMBOLS answer says the limit is: the enforced one unless told to claim another. */
  get statedCeiling(): number {
    return this.stated ?? this.ceiling;
  }

  get symbolCeiling(): number {
    return this.ceiling;
  }

  responseDelayMs(op: 'subscribe' | 'unsubscribe'): number {
    return this.responseDelay[op];
  }

  get connackDelayMs(): number {
    return this.connackDelay;
  }

  /** The return code a CONNECT with `appKey` gets regardless of the key's standing, if one was set. */
  connectRefusal(appKey: string | undefined): number | undefined {
    return appKey === undefined ? undefined : this.connectRefusals.get(appKey);
  }

  /**
   * Later CONNECTs with `appKey` are answered `returnCode` (1–5) before any other check, while
   * HTTP calls with the key are answered as before: a venue whose MQTT side refuses what its API
   * still takes. null ends it.
   */
  refuseConnects(appKey: string, returnCode: number | null): void {
    if (returnCode === null) {
      this.connectRefusals.delete(appKey);
      return;
    }
    if (!Number.isInteger(returnCode) || returnCode < 1 || returnCode > 5)
      throw new RangeError(`a CONNACK refusal's return code must be an integer from 1 to 5, got ${returnCode}`);
    this.connectRefusals.set(appKey, returnCode);
  }

  /** The status to fail this call with, if failNextCalls still has some to spend. */
  takeFailure(): number | undefined {
    if (this.failures.remaining <= 0) return undefined;
    this.failures.remaining -= 1;
    return this.failures.status;
  }

  /** False when `appKey` has run out of requests; always true without a rate limit. */
  admit(appKey: string): boolean {
    if (this.limit === null) return true;
    let bucket = this.buckets.get(appKey);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.limit);
      this.buckets.set(appKey, bucket);
    }
    return bucket.tryTake();
  }

  /** Replaces the list; an empty list means every well-formed symbol is listed again. */
  setUnknownSymbols(symbols: readonly string[]): void {
    this.unknown = new Set(symbols);
  }

  /** `stated`: the limit the venue names in its refusals, when it enforces less than it says. */
  setSymbolCeiling(limit: number, stated?: number): void {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`symbol ceiling must be an integer >= 0, got ${limit}`);
    if (stated !== undefined && (!Number.isInteger(stated) || stated < 0))
      throw new RangeError(`stated ceiling must be an integer >= 0, got ${stated}`);
    this.ceiling = limit;
    this.stated = stated;
  }

  /** Without `op`, both operations; with it, just that one (so one can overtake the other). */
  setResponseDelay(ms: number, op?: 'subscribe' | 'unsubscribe'): void {
    assertMs('response delay', ms);
    if (op !== 'unsubscribe') this.responseDelay.subscribe = ms;
    if (op !== 'subscribe') this.responseDelay.unsubscribe = ms;
  }

  setConnackDelay(ms: number): void {
    assertMs('CONNACK delay', ms);
    this.connackDelay = ms;
  }

  failNextCalls(count: number, status = 503): void {
    if (!Number.isInteger(count) || count < 0) throw new RangeError(`failNextCalls count must be an integer >= 0, got ${count}`);
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new RangeError(`failNextCalls status must be 400..599, got ${status}`);
    this.failures = { remaining: count, status };
  }

  /** A new limit starts every key with a full bucket; null switches limiting off. */
  setRateLimit(limit: VenueRateLimit | null): void {
    if (limit !== null) TokenBucket.assertValid(limit);
    this.limit = limit === null ? null : { ...limit };
    this.buckets = new Map();
  }
}
