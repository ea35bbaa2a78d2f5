import type { Msg } from '@nats-io/transport-node';

/** A message the JetStream stream republished: where it was stored, and the one of its subject before it. */
export interface RepublishedMessage {
  readonly seq: number;
  /** The subject's previous stored sequence when this one was stored; 0 for its first. */
  readonly lastSeq: number;
  /** The stored payload; null when the stream republishes headers only. */
  readonly payload: Uint8Array | null;
}

/**
 * Reads the republish headers (checked against nats-server 2.9.10: Nats-Stream, Nats-Subject,
 * Nats-Sequence, Nats-Last-Sequence; Nats-Msg-Size only with `headers_only`). Null when the
 * message is not a republish of `subject` in `jetStream`: anything else published on the live
 * subject is no entry, and only a read by sequence can say what is stored.
 */
export function parseRepublished(msg: Msg, jetStream: string, subject: string): RepublishedMessage | null {
  const headers = msg.headers;
  if (headers === undefined) return null;
  if (headers.get('Nats-Stream') !== jetStream || headers.get('Nats-Subject') !== subject) return null;
  const seq = sequence(headers.get('Nats-Sequence'));
  const lastSeq = sequence(headers.get('Nats-Last-Sequence'));
  if (seq === null || lastSeq === null || seq === 0 || lastSeq >= seq) return null;
  return { seq, lastSeq, payload: headers.has('Nats-Msg-Size') ? null : msg.data };
}

function sequence(text: string): number | null {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
