import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 19;

/**
 * A fresh session id for shard `index`: `sg`, the index in two digits, 19 random characters of
 * [0-9A-Za-z] — 23 in all. It is the MQTT client id, and MQTT 3.1.1 only obliges a server to take
 * 1–23 of [0-9a-zA-Z]: a longer or richer id may be refused. The venue name stays out (up to 32
 * characters, and `-`/`_`); logs pair the id with venue and shard instead. The random part (~113
 * bits) is what makes the id unique: two venues on one key, two workers handing over, a
 * replaced session — a collision would be a takeover of someone else's connection.
 */
export function newSessionId(index: number): string {
  // maxSessions is at most 100, so two digits always fit; anything else is a bug upstream.
  if (!Number.isInteger(index) || index < 0 || index > 99) throw new RangeError(`shard index must be 0..99, got ${index}`);
  let random = '';
  for (let i = 0; i < RANDOM_CHARS; i++) random += ALPHABET[randomInt(ALPHABET.length)];
  return `sg${String(index).padStart(2, '0')}${random}`;
}
