import { hashSlotPart } from './hashSlotPart.js';

export type StreamSlotTag = { readonly ok: true; readonly tag: string } | { readonly ok: false; readonly reason: string };

/**
 * The hash tag `{S}` that makes a companion key (an idempotency record, ingest's lease, fence,
 * checkpoint and dedupe keys) hash to the stream's own Redis Cluster slot, so one script can
 * touch the stream and its companions: `S` is the part of the stream name Redis hashes.
 * A stream hashed whole whose name holds a `}` cannot be wrapped in a tag (the tag would end at
 * that `}`): no other key can share its slot, and it needs a hash tag of its own.
 */
export function streamSlotTag(stream: string): StreamSlotTag {
  const part = hashSlotPart(stream);
  if (part.includes('}')) {
    return {
      ok: false,
      reason:
        `"${stream}" hashes as a whole and contains "}", so no other key can share its Redis Cluster slot; ` +
        'give the stream a hash tag (a non-empty "{…}" part without braces inside, e.g. "{orders}:42")',
    };
  }
  return { ok: true, tag: `{${part}}` };
}
