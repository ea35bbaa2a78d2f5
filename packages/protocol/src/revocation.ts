import * as z from 'zod/mini';
import { streamNameSchema } from './streamName.js';

/**
 * Where revocations live on each Redis target (docs/protocol.md §10, "Revocation"): a sorted set
 * of records scored by their expiry (epoch ms), and a channel each new record is published on.
 */
export const REVOCATIONS_KEY = 'streamgate:revocations';
export const REVOCATIONS_CHANNEL = 'streamgate:revocations';

/**
 * One revocation: tokens of `sub` (and/or for `stream`) whose `iat` is below `before` (epoch
 * seconds) are refused, and subscriptions holding one are ended. At least one of `sub` and
 * `stream` is present. `exp` (epoch ms) is when the record can no longer match a live token.
 */
export const revocationRecordSchema = z
  .object({
    v: z.literal(1),
    sub: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
    stream: z.optional(streamNameSchema),
    before: z.int().check(z.positive()),
    exp: z.int().check(z.positive()),
  })
  .check(z.refine((r) => r.sub !== undefined || r.stream !== undefined, { message: 'a revocation names a sub, a stream, or both' }));

export type RevocationRecord = z.infer<typeof revocationRecordSchema>;

/** Parses one member of the set (or one channel message); a failure says why it is unusable. */
export function parseRevocationRecord(text: string): { ok: true; record: RevocationRecord } | { ok: false; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'revocation record is not JSON' };
  }
  const parsed = revocationRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `revocation record ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, record: parsed.data };
}
