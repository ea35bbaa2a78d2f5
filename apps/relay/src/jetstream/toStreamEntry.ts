import { isUtf8 } from 'node:buffer';
import { jetStreamId } from '@streamgate/protocol';
import type { StreamEntry } from '../core/StreamSource.js';
import { DATA_NOT_UTF8 } from '../redis/parseReplies.js';

const decoder = new TextDecoder();

/**
 * A JetStream message as the hub's entry: its payload is the entry's `data` value, verbatim.
 * Payload bytes that are not UTF-8 are marked `malformed` with the Redis source's reason, not
 * decoded into U+FFFD and relayed as another payload than the one stored.
 */
export function toStreamEntry(sequence: number, payload: Uint8Array): StreamEntry {
  const id = jetStreamId(sequence);
  const data = decoder.decode(payload);
  return isUtf8(payload) ? { id, fields: ['data', data] } : { id, fields: ['data', data], malformed: DATA_NOT_UTF8 };
}
