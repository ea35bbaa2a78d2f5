import type { StreamId } from './streamId.js';

/**
 * Positions on a JetStream target are its stream sequences, written `0-<sequence>` so that they
 * compare as every other id does (protocol §2): `0-0` is before every entry and the first
 * message, sequence 1, is `0-1`. The sequence is the JetStream stream's, shared by all its
 * subjects, so one task's ids need not be consecutive.
 */
export function jetStreamId(sequence: number): StreamId {
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RangeError(`not a JetStream sequence: ${sequence}`);
  return `0-${sequence}`;
}

/**
 * The sequence an id names on a JetStream target, or null when the id cannot be a position there
 * (a Redis id, whose first part is a time; a sequence beyond 2^53 − 1, which no client library
 * here reads exactly).
 */
export function jetStreamSequence(id: StreamId): number | null {
  if (!id.startsWith('0-')) return null;
  const sequence = Number(id.slice(2));
  return Number.isSafeInteger(sequence) ? sequence : null;
}
