import type { VenueKind } from './venueKinds.js';
import { VENUE_KINDS, kindOfSubType } from './venueKinds.js';

export interface MarketDataRequest {
  sessionId: string;
  /** As sent, order kept; whether the venue lists them is decided later. */
  symbols: string[];
  /** Deduplicated, snapshot/quote/tick order. */
  kinds: VenueKind[];
}

export type ParsedMarketDataRequest =
  { ok: true; request: MarketDataRequest } | { ok: false; field: string; message: string; partial: Partial<MarketDataRequest> };

/** Far above any real batch (the venue caps a session at 100 symbols); keeps a runaway list cheap to refuse. */
const MAX_SYMBOLS_PER_CALL = 1_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * Checks a subscribe / unsubscribe body by hand (testkit carries no schema library). A symbol
 * that is a string but not one the venue could list is not a parameter error: the venue answers
 * that with INVALID_SYMBOL, naming it. `sub_types` is required to subscribe and defaults to every
 * kind on unsubscribe.
 */
export function parseMarketDataRequest(body: unknown, op: 'subscribe' | 'unsubscribe'): ParsedMarketDataRequest {
  const partial: Partial<MarketDataRequest> = {};
  const refuse = (field: string, message: string): ParsedMarketDataRequest => ({ ok: false, field, message, partial });
  if (!isRecord(body)) return refuse('body', 'body must be a JSON object');

  const { session_id: sessionId, symbols, sub_types: subTypes } = body;
  if (isNonEmptyString(sessionId)) partial.sessionId = sessionId;
  const named = Array.isArray(symbols) ? symbols.filter(isNonEmptyString) : [];
  partial.symbols = named;

  if (!isNonEmptyString(sessionId)) return refuse('session_id', 'session_id must be a non-empty string');
  if (!Array.isArray(symbols) || symbols.length === 0) return refuse('symbols', 'symbols must be a non-empty array');
  if (symbols.length > MAX_SYMBOLS_PER_CALL) return refuse('symbols', `symbols holds more than ${MAX_SYMBOLS_PER_CALL} entries`);
  const badSymbol = symbols.findIndex((symbol) => !isNonEmptyString(symbol));
  if (badSymbol !== -1) return refuse(`symbols[${badSymbol}]`, 'every symbol must be a non-empty string');

  let kinds: VenueKind[];
  if (subTypes === undefined && op === 'unsubscribe') {
    kinds = [...VENUE_KINDS];
  } else {
    if (!Array.isArray(subTypes) || subTypes.length === 0) return refuse('sub_types', 'sub_types must be a non-empty array');
    const wanted = new Set<VenueKind>();
    for (const [index, subType] of subTypes.entries()) {
      const kind = typeof subType === 'string' ? kindOfSubType(subType) : undefined;
      if (kind === undefined) return refuse(`sub_types[${index}]`, 'sub_types entries must be SNAPSHOT, QUOTE or TICK');
      wanted.add(kind);
    }
    kinds = VENUE_KINDS.filter((kind) => wanted.has(kind));
  }
  partial.kinds = kinds;
  return { ok: true, request: { sessionId, symbols: named, kinds } };
}
