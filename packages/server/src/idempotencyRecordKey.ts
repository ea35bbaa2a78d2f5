import { streamSlotTag } from '@streamgate/redis';

/** Every record key starts with this; it holds no `{`, so the first brace of the key is ours. */
export const IDEMPOTENCY_RECORD_PREFIX = 'streamgate:idem:';

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
  const tag = streamSlotTag(streamName);
  if (!tag.ok) return { ok: false, reason: `${tag.reason} to publish to it idempotently` };
  return { ok: true, key: `${IDEMPOTENCY_RECORD_PREFIX}${tag.tag}${streamName}#${idempotencyKey}` };
}
