/** Every record key starts with this; it holds no `{`, so the first brace of the key is ours. */
export const IDEMPOTENCY_RECORD_PREFIX = 'streamgate:idem:';

/**
 * The part of a key Redis Cluster hashes: the text between the first `{` and the first `}` after
 * it when that text is not empty (a hash tag), otherwise the whole key.
 */
export function hashSlotPart(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

export type IdempotencyRecordKey = { ok: true; key: string } | { ok: false; reason: string };

/**
 * Where the publisher remembers which entry an idempotency key wrote:
 * `streamgate:idem:{<hash-slot part of the stream>}<stream>#<idempotency key>`.
 *
 * The braces make the record hash exactly like the stream, so the one script that reads the
 * record, XADDs and writes the record touches a single slot and runs unchanged on Redis Cluster.
 * Stream names never contain `#`, so the first `#` ends the stream name and two (stream, key)
 * pairs never share a record. A stream hashed whole whose name holds a `}` cannot be wrapped in a
 * tag (the tag would end at that `}`), so it has no record key: such a stream needs a hash tag.
 */
export function idempotencyRecordKey(streamName: string, idempotencyKey: string): IdempotencyRecordKey {
  const slotPart = hashSlotPart(streamName);
  if (slotPart.includes('}')) {
    return {
      ok: false,
      reason:
        `"${streamName}" hashes as a whole and contains "}", so no other key can share its Redis Cluster slot; ` +
        'give the stream a hash tag (a non-empty "{…}" part without braces inside, e.g. "{orders}:42") to publish to it idempotently',
    };
  }
  return { ok: true, key: `${IDEMPOTENCY_RECORD_PREFIX}{${slotPart}}${streamName}#${idempotencyKey}` };
}
