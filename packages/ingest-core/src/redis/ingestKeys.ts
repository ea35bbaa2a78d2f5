import { streamSlotTag } from '@streamgate/redis';
import { IngestFailure } from '../IngestError.js';

export interface IngestKeys {
  readonly lease: string;
  readonly fence: string;
  readonly state: string;
  dedupe(id: string): string;
}

/**
 * Redis keys ingest keeps beside a stream: `<prefix>{S}<stream>:lease|:fence|:state|:d:<id>`,
 * where `{S}` is the stream's slot tag (streamSlotTag: S is the part of the stream name Redis
 * Cluster hashes). Every key then hashes to the stream's own slot, with or without a hash tag in
 * the stream name, so the write script (fence, stream, state, dedupe keys) and the lease scripts
 * (lease, fence) each touch one slot and run on Redis Cluster. One layout for every target kind.
 * The prefix must not hold a brace (the first `{` of the key must open the slot tag). Throws an
 * IngestFailure (`stream_untaggable`) for a stream no other key can share a slot with.
 */
export function ingestKeys(prefix: string, stream: string): IngestKeys {
  if (/[{}]/.test(prefix)) throw new RangeError(`ingest key prefix "${prefix}" must not contain "{" or "}"`);
  const slot = streamSlotTag(stream);
  if (!slot.ok) {
    throw new IngestFailure({ code: 'stream_untaggable', retryable: false, stream, message: `ingest cannot serve ${slot.reason}` });
  }
  const base = `${prefix}${slot.tag}${stream}`;
  return {
    lease: `${base}:lease`,
    fence: `${base}:fence`,
    state: `${base}:state`,
    dedupe: (id: string) => `${base}:d:${id}`,
  };
}
