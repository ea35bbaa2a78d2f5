import { isUtf8 } from 'node:buffer';
import { isStreamId, STREAM_START } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import type { StreamEntry, StreamInfo } from '../core/StreamSource.js';
import type { KeySighting } from './KeySighting.js';

// Redis replies are parsed at this edge like any other input: the core trusts their shape.

export class ReplyShapeError extends Error {
  override readonly name = 'ReplyShapeError';
}

function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ReplyShapeError(`${what}: expected an array`);
  return value;
}

function asString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  throw new ReplyShapeError(`${what}: expected a string`);
}

const ID_SHAPE = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})$/;

/**
 * Every entry of every read passes here, so the common case skips the zod schema: the shape is
 * one regex, and only a part of 20 digits (which may exceed 2^64-1) needs the full check.
 */
export function isReplyId(s: string): s is StreamId {
  if (!ID_SHAPE.test(s)) return false;
  const dash = s.indexOf('-');
  return dash === 20 || s.length - dash - 1 === 20 ? isStreamId(s) : true;
}

function asId(value: unknown, what: string): StreamId {
  const s = asString(value, what);
  if (!isReplyId(s)) throw new ReplyShapeError(`${what}: not a stream id`);
  return s;
}

export const DATA_NOT_UTF8 = 'field "data" is not valid UTF-8';

/**
 * Entries of an XRANGE or XREAD reply. Read as bytes (Buffers), the relayed value (the first
 * `data` field) is checked to be valid UTF-8 before it is decoded: decoding replaces bad bytes
 * with U+FFFD, and the client would get a different payload than the one stored, with no sign of
 * it. Other fields are not relayed, so binary in them is nobody's problem here. Strings (a reply
 * that was decoded already) cannot be checked.
 */
export function parseEntries(reply: unknown): StreamEntry[] {
  const raw = asArray(reply, 'entries');
  const entries: StreamEntry[] = new Array<StreamEntry>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const pair = asArray(raw[i], 'entry');
    const rawFields = asArray(pair[1] ?? [], 'entry fields');
    const fields: string[] = new Array<string>(rawFields.length);
    let dataSeen = false;
    let malformed: string | undefined;
    for (let j = 0; j < rawFields.length; j++) {
      const value = rawFields[j];
      if (!dataSeen && j % 2 === 1 && fields[j - 1] === 'data') {
        dataSeen = true;
        if (Buffer.isBuffer(value) && !isUtf8(value)) malformed = DATA_NOT_UTF8;
      }
      fields[j] = asString(value, 'field');
    }
    const id = asId(pair[0], 'entry id');
    entries[i] = malformed === undefined ? { id, fields } : { id, fields, malformed };
  }
  return entries;
}

/** XREAD reply: null on timeout, else `[[key, entries], …]`. */
export function parseXread(reply: unknown): Array<[string, StreamEntry[]]> {
  if (reply === null) return [];
  return asArray(reply, 'xread').map((raw) => {
    const pair = asArray(raw, 'xread stream');
    return [asString(pair[0], 'stream key'), parseEntries(pair[1])];
  });
}

/** A reply that must be an integer (CLIENT ID, EXISTS, CLIENT UNBLOCK). */
export function parseInteger(reply: unknown, what: string): number {
  if (typeof reply === 'number' && Number.isInteger(reply)) return reply;
  throw new ReplyShapeError(`${what}: expected an integer`);
}

/** TYPE reply: `stream`, `string`, `none`, … */
export function parseTypeName(reply: unknown): string {
  return asString(reply, 'type');
}

function xinfoFields(reply: unknown): Map<string, unknown> {
  const flat = asArray(reply, 'xinfo');
  const map = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(asString(flat[i], 'xinfo key'), flat[i + 1]);
  return map;
}

function xinfoNumber(map: ReadonlyMap<string, unknown>, key: string): number | null {
  const v = map.get(key);
  if (v === undefined) return null;
  const n = typeof v === 'number' ? v : Number(asString(v, key));
  if (!Number.isFinite(n)) throw new ReplyShapeError(`${key}: not a number`);
  return n;
}

/** XINFO STREAM reply (flat key/value list, Redis 7 fields; older servers lack some). */
export function parseXinfo(reply: unknown): StreamInfo {
  const map = xinfoFields(reply);
  const length = xinfoNumber(map, 'length') ?? 0;
  const first = map.get('first-entry');
  const firstEntryId = first === null || first === undefined ? null : asId(asArray(first, 'first-entry')[0], 'first-entry id');
  return {
    lastGeneratedId: asId(map.get('last-generated-id'), 'last-generated-id'),
    firstEntryId,
    length,
    // Before Redis 7 these are unknown; assuming nothing was removed makes old ids read as `reset`.
    entriesAdded: xinfoNumber(map, 'entries-added') ?? length,
    maxDeletedEntryId: map.has('max-deleted-entry-id') ? asId(map.get('max-deleted-entry-id'), 'max-deleted-entry-id') : STREAM_START,
  };
}

/**
 * The incarnation probe script's reply (redisIncarnationProbe): per key 0 (missing), -1 (another
 * type: null, not judged), or `[cursorStored, last-generated-id, entries-added, first entry id,
 * max-deleted-entry-id, length]` with nil for what the server did not say.
 */
export function parseIncarnationSightings(reply: unknown, keys: number): Array<KeySighting | null> {
  const raw = asArray(reply, 'incarnation probe');
  if (raw.length !== keys) throw new ReplyShapeError(`incarnation probe: ${raw.length} replies for ${keys} keys`);
  return raw.map((item): KeySighting | null => {
    if (item === 0) return { exists: false };
    if (item === -1) return null;
    const [stored, last, added, first, maxDeleted, length] = asArray(item, 'incarnation probe key');
    return {
      exists: true,
      cursorStored: parseInteger(stored, 'cursor stored') > 0,
      length: parseInteger(length, 'length'),
      lastGeneratedId: asId(last, 'last-generated-id'),
      entriesAdded: added === null ? null : parseInteger(added, 'entries-added'),
      firstEntryId: first === null ? null : asId(first, 'first-entry id'),
      maxDeletedEntryId: maxDeleted === null ? null : asId(maxDeleted, 'max-deleted-entry-id'),
    };
  });
}
