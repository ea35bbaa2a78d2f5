import type { StreamEntry } from './StreamSource.js';
import { decodeEntryFields } from '@streamgate/protocol';
import type { ErrorCode, Recovery, StreamId, StreamName } from '@streamgate/protocol';

/**
 * Serializes an entry once for every subscriber. The payload's JSON text is spliced in as is:
 * stream names and ids are from a safe character set, so only the prefix needs escaping, once.
 */
export function eventFrameText(streamJson: string, entry: StreamEntry): { text: string; malformed: boolean } {
  const decoded = decodeEntryFields(entry.fields);
  if (decoded.ok) {
    return { text: `{"op":"event","stream":${streamJson},"id":"${entry.id}","data":${decoded.json}}`, malformed: false };
  }
  return {
    text: `{"op":"malformed","stream":${streamJson},"id":"${entry.id}","reason":${JSON.stringify(decoded.reason)}}`,
    malformed: true,
  };
}

export function subscribedFrameText(sid: string, stream: StreamName, recovery: Recovery, position: StreamId, exp: number): string {
  return JSON.stringify({ op: 'subscribed', sid, stream, recovery, position, exp });
}

export function liveFrameText(sid: string, position: StreamId): string {
  return JSON.stringify({ op: 'live', sid, position });
}

export function errorFrameText(code: ErrorCode, retryable: boolean, message: string, sid?: string): string {
  return JSON.stringify(sid === undefined ? { op: 'error', code, retryable, message } : { op: 'error', sid, code, retryable, message });
}
