import * as z from 'zod/mini';

/**
 * A Redis stream entry id, `<ms>-<seq>`. Every position a client holds is one of these, so
 * comparisons must be exact: both parts are compared as unbounded decimal integers.
 */
const U64_MAX = '18446744073709551615';

export const streamIdSchema = z.string().check(
  z.maxLength(41),
  z.regex(/^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})$/, 'must be a Redis stream id like 1700000000000-0'),
  // Redis refuses parts above 2^64-1; such an id could never be a position.
  z.refine((id) => id.split('-').every((part) => compareDecimal(part, U64_MAX) <= 0), 'each part must be at most 2^64-1'),
);

export type StreamId = z.infer<typeof streamIdSchema>;

/** The id before every entry: resuming from it asks for the whole retained history. */
export const STREAM_START: StreamId = '0-0';

function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total order of stream ids, as Redis orders them. Both ids must already be valid. */
export function compareStreamIds(a: StreamId, b: StreamId): number {
  if (a === b) return 0;
  // Every entry the relay delivers is compared a few times on its way: no slices. Parts have no
  // leading zeros, so a longer part is the larger one, and parts of one length compare by digit.
  const da = a.indexOf('-');
  const db = b.indexOf('-');
  if (da !== db) return da < db ? -1 : 1;
  const ms = compareDigits(a, b, 0, da);
  if (ms !== 0) return ms;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return compareDigits(a, b, da + 1, a.length);
}

function compareDigits(a: string, b: string, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return ca < cb ? -1 : 1;
  }
  return 0;
}

export function isStreamId(value: string): value is StreamId {
  return streamIdSchema.safeParse(value).success;
}
