import { isUtf8 } from 'node:buffer';
import type { StreamId } from '@streamgate/protocol';
import type { StreamEntry } from '../core/StreamSource.js';
import { DATA_NOT_UTF8, isReplyId } from './parseReplies.js';

/** A writer's live message (docs/protocol.md §11): the entry it just wrote and the id of the stream's last entry before it. */
export interface LiveMessage {
  readonly prev: StreamId;
  readonly entry: StreamEntry;
}

/** A live message that does not parse: the key is read from the stream instead. */
export class LiveMessageError extends Error {
  override readonly name = 'LiveMessageError';
}

const SPACE = 0x20;
const DASH = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** A part this long may exceed 2^64-1: only such an id takes the full check. */
const LONGEST_PART = 20;

/**
 * `<prev id> <id> <data>` as bytes: two ids (ASCII) and the entry's `data` value, verbatim. The
 * value is checked to be UTF-8 as a read's would be (parseEntries), so a client gets the same
 * frame whichever way the entry reached the relay. Null for anything else, or a prev id not
 * below the id: a message is only a hint, and one that cannot be trusted is read from the stream.
 */
export function parseLiveMessage(payload: Buffer): LiveMessage | null {
  const first = payload.indexOf(SPACE);
  if (first === -1) return null;
  const second = payload.indexOf(SPACE, first + 1);
  if (second === -1) return null;
  const prevDash = idDash(payload, 0, first);
  const idDashAt = idDash(payload, first + 1, second);
  if (prevDash === -1 || idDashAt === -1) return null;
  // compareStreamIds, on the bytes: the strings sliced from one decode below would be walked
  // character by character through the slice, several times slower.
  const order =
    compareDigits(payload, 0, prevDash, first + 1, idDashAt) || compareDigits(payload, prevDash + 1, first, idDashAt + 1, second);
  if (order >= 0) return null;
  // One decode for both ids (each decode is a call into C++), apart from the value's: the
  // cursor keeps the id, and a slice of the whole message would keep the value alive with it.
  const ids = payload.toString('latin1', 0, second);
  const prev = ids.slice(0, first);
  const id = ids.slice(first + 1);
  if (!isBelow64Bits(prev) || !isBelow64Bits(id)) return null;
  const fields = ['data', payload.toString('utf8', second + 1)];
  // The ids are ASCII: the message is UTF-8 exactly when the value is.
  return { prev, entry: isUtf8(payload) ? { id, fields } : { id, fields, malformed: DATA_NOT_UTF8 } };
}

/**
 * Where the dash is if `payload[from, to)` has a stream id's shape, else -1. Every live entry
 * passes here twice: the bytes are checked as they are, without a regex or a string (as
 * isReplyId would need).
 */
function idDash(payload: Buffer, from: number, to: number): number {
  let dash = -1;
  for (let i = from; i < to; i++) {
    const c = payload[i] as number;
    if (c === DASH && dash === -1) dash = i;
    else if (c < ZERO || c > NINE) return -1;
  }
  const ms = dash - from;
  const seq = to - dash - 1;
  if (dash === -1 || ms < 1 || ms > LONGEST_PART || seq < 1 || seq > LONGEST_PART) return -1;
  return (ms > 1 && payload[from] === ZERO) || (seq > 1 && payload[dash + 1] === ZERO) ? -1 : dash;
}

/** Two parts of ids, `[aFrom, aTo)` and `[bFrom, bTo)`, in order: no leading zeros, so the longer is larger. */
function compareDigits(payload: Buffer, aFrom: number, aTo: number, bFrom: number, bTo: number): number {
  if (aTo - aFrom !== bTo - bFrom) return aTo - aFrom < bTo - bFrom ? -1 : 1;
  for (let i = 0; i < aTo - aFrom; i++) {
    const x = payload[aFrom + i] as number;
    const y = payload[bFrom + i] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Of ids of the right shape, only one with a part of LONGEST_PART digits may exceed 2^64-1. */
function isBelow64Bits(id: string): id is StreamId {
  return id.length < LONGEST_PART + 2 || isReplyId(id);
}
