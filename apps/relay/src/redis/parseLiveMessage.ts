import { isUtf8 } from 'node:buffer';
import { compareStreamIds } from '@streamgate/protocol';
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
  const prev = payload.toString('latin1', 0, first);
  const id = payload.toString('latin1', first + 1, second);
  if (!isReplyId(prev) || !isReplyId(id) || compareStreamIds(prev, id) >= 0) return null;
  const data = payload.subarray(second + 1);
  const fields = ['data', data.toString('utf8')];
  return { prev, entry: isUtf8(data) ? { id, fields } : { id, fields, malformed: DATA_NOT_UTF8 } };
}
