import type { VenueRateLimit } from './TokenBucket.js';

/** A body for `POST /sim/faults`: the fault's name and the arguments of the handle method of that name. */
export type VenueSimFault =
  | { fault: 'dropSession' | 'crashSocket' | 'silence'; sessionId: string }
  | { fault: 'setUnknownSymbols'; symbols: string[] }
  | { fault: 'setSymbolCeiling'; limit: number; stated?: number }
  | { fault: 'setResponseDelay'; ms: number; op?: 'subscribe' | 'unsubscribe' }
  | { fault: 'setConnackDelay'; ms: number }
  | { fault: 'failNextCalls'; count: number; status?: number }
  | { fault: 'setRateLimit'; rateLimit: VenueRateLimit | null }
  | { fault: 'restartSequences' }
  | { fault: 'revokeAppKey'; appKey: string }
  | { fault: 'refuseConnects'; appKey: string; returnCode: number | null };

export type ParsedFault = { ok: true; fault: VenueSimFault } | { ok: false; field: string; message: string };

/** Longer than any test should wait on one answer; a bigger number is a typo, not a scenario. */
const MAX_DELAY_MS = 600_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** Checks a fault body by hand; a refusal names the first field that is wrong. */
export function parseFault(body: unknown): ParsedFault {
  const refuse = (field: string, message: string): ParsedFault => ({ ok: false, field, message });
  if (!isRecord(body)) return refuse('body', 'body must be a JSON object');
  const { fault } = body;
  switch (fault) {
    case 'restartSequences':
      return { ok: true, fault: { fault } };
    case 'revokeAppKey': {
      const { appKey } = body;
      if (typeof appKey !== 'string' || appKey.length === 0) return refuse('appKey', 'appKey must be a non-empty string');
      return { ok: true, fault: { fault, appKey } };
    }
    case 'refuseConnects': {
      const { appKey, returnCode } = body;
      if (typeof appKey !== 'string' || appKey.length === 0) return refuse('appKey', 'appKey must be a non-empty string');
      if (returnCode !== null && !isCount(returnCode, 1, 5))
        return refuse('returnCode', 'returnCode must be an integer from 1 to 5, or null');
      return { ok: true, fault: { fault, appKey, returnCode } };
    }
    case 'dropSession':
    case 'crashSocket':
    case 'silence': {
      const { sessionId } = body;
      if (typeof sessionId !== 'string' || sessionId.length === 0) return refuse('sessionId', 'sessionId must be a non-empty string');
      return { ok: true, fault: { fault, sessionId } };
    }
    case 'setUnknownSymbols': {
      const { symbols } = body;
      if (!Array.isArray(symbols) || !symbols.every((s): s is string => typeof s === 'string')) {
        return refuse('symbols', 'symbols must be an array of strings (empty clears the list)');
      }
      return { ok: true, fault: { fault, symbols } };
    }
    case 'setSymbolCeiling': {
      const { limit, stated } = body;
      if (!isCount(limit, 0)) return refuse('limit', 'limit must be an integer >= 0');
      if (stated !== undefined && !isCount(stated, 0)) return refuse('stated', 'stated must be an integer >= 0 when given');
      return { ok: true, fault: stated === undefined ? { fault, limit } : { fault, limit, stated } };
    }
    case 'setResponseDelay': {
      const { ms, op } = body;
      if (!isCount(ms, 0, MAX_DELAY_MS)) return refuse('ms', `ms must be an integer from 0 to ${MAX_DELAY_MS}`);
      if (op !== undefined && op !== 'subscribe' && op !== 'unsubscribe')
        return refuse('op', 'op must be "subscribe" or "unsubscribe" when given');
      return { ok: true, fault: op === undefined ? { fault, ms } : { fault, ms, op } };
    }
    case 'setConnackDelay': {
      const { ms } = body;
      if (!isCount(ms, 0, MAX_DELAY_MS)) return refuse('ms', `ms must be an integer from 0 to ${MAX_DELAY_MS}`);
      return { ok: true, fault: { fault, ms } };
    }
    case 'failNextCalls': {
      const { count, status } = body;
      if (!isCount(count, 0)) return refuse('count', 'count must be an integer >= 0');
      if (status !== undefined && !isCount(status, 400, 599)) return refuse('status', 'status must be an integer from 400 to 599');
      return { ok: true, fault: status === undefined ? { fault, count } : { fault, count, status } };
    }
    case 'setRateLimit': {
      const { rateLimit } = body;
      if (rateLimit === null) return { ok: true, fault: { fault, rateLimit } };
      if (!isRecord(rateLimit)) return refuse('rateLimit', 'rateLimit must be {perSecond, burst} or null');
      const { perSecond, burst } = rateLimit;
      if (typeof perSecond !== 'number' || !(perSecond > 0) || !Number.isFinite(perSecond)) {
        return refuse('rateLimit.perSecond', 'perSecond must be a number > 0');
      }
      if (!isCount(burst, 1)) return refuse('rateLimit.burst', 'burst must be an integer >= 1');
      return { ok: true, fault: { fault, rateLimit: { perSecond, burst } } };
    }
    default:
      return refuse(
        'fault',
        'fault must be one of dropSession, crashSocket, silence, setUnknownSymbols, setSymbolCeiling, ' +
          'setResponseDelay, setConnackDelay, failNextCalls, setRateLimit, restartSequences, revokeAppKey, refuseConnects',
      );
  }
}
