import type { RpcError } from './RpcError.js';

/** A provider refusing an eth_getLogs query for its size, and the span it said it would serve. */
export interface RangeRefusal {
  /** Blocks per query the provider named (a limit or a suggested range), when it named one. */
  readonly spanHint?: number;
}

/*
 * Providers refuse a log query that spans too many blocks or returns too many logs with their own
 * codes (-32005, -32602, -32600, -32614, -32000…) and wordings; the codes are shared with rate
 * limits and bad parameters, so the wording decides. Matched on lower-cased text.
 */
const REFUSALS: readonly RegExp[] = [
  /more than [\d,]+ results/, // infura: query returned more than 10000 results
  /query exceeds max results/, // reth
  /log response size exceeded/, // alchemy
  /response (size )?(is )?too (large|big)/,
  /too many (blocks|results|logs)/,
  /(block )?range (is )?too (large|wide|big)/, // block range too large, range is too wide
  /exceed(s|ed)? (the )?(max(imum)?|limit)\w* (block )?range/, // exceed maximum block range: 5000
  /max(imum)? (block )?range (limit|exceeded)/,
  /requested range exceeds/, // besu
  /limited to a [\d,]+ (block )?range/, // quicknode
  /block range greater than [\d,]+/,
  /range (limit|size) exceeded/,
];

const SPAN_PATTERNS: readonly RegExp[] = [
  /(?:max(?:imum)? (?:block )?range|range limit|limited to a|block range greater than)\D{0,8}?([\d,]+)/,
  /\b([\d,]+)[- ]block range/,
];

const num = (text: string) => Number.parseInt(text.replaceAll(',', ''), 10);

/** Whether `error` is a provider refusing a log query for its size (null: any other failure). */
export function rangeRefusal(error: RpcError): RangeRefusal | null {
  if (error.code === 'range_refused') return {};
  if (error.code !== 'rpc_error') return null;
  const text = error.message.toLowerCase();
  if (!REFUSALS.some((r) => r.test(text))) return null;
  // A suggested range, e.g. "this block range should work: [0x1a2b, 0x1a5f]".
  const suggested = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/.exec(text);
  if (suggested?.[1] !== undefined && suggested[2] !== undefined) {
    const span = Number.parseInt(suggested[2], 16) - Number.parseInt(suggested[1], 16) + 1;
    if (span >= 1) return { spanHint: span };
  }
  for (const pattern of SPAN_PATTERNS) {
    const match = pattern.exec(text)?.[1];
    if (match !== undefined && num(match) >= 1) return { spanHint: num(match) };
  }
  return {};
}
