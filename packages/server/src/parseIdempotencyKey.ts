export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

// Printable ASCII without space: UUIDs, ULIDs and "order-17:filled" fit, and the record key a
// foreign producer builds from it is the same bytes in every language.
const KEY_CHARACTER = /^[\x21-\x7e]$/;

export type ParsedIdempotencyKey = { ok: true; key: string } | { ok: false; reason: string };

/** Checks an idempotency key from a caller that may not be typed (JSON, another service). */
export function parseIdempotencyKey(value: unknown): ParsedIdempotencyKey {
  if (typeof value !== 'string') return { ok: false, reason: `must be a string, got ${typeof value}` };
  if (value.length === 0) return { ok: false, reason: 'must not be empty' };
  if (value.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return { ok: false, reason: `is ${value.length} characters long; at most ${IDEMPOTENCY_KEY_MAX_LENGTH} are allowed` };
  }
  for (let i = 0; i < value.length; i += 1) {
    const character = value.charAt(i);
    if (!KEY_CHARACTER.test(character)) {
      return {
        ok: false,
        reason: `has ${JSON.stringify(character)} at index ${i}; only printable ASCII without space (! to ~) is allowed`,
      };
    }
  }
  return { ok: true, key: value };
}
