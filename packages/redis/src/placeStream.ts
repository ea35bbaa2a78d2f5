import { createHash } from 'node:crypto';

/**
 * A target's score for a stream in rendezvous (highest-random-weight) hashing: the first 8 bytes
 * of SHA-256(target ‖ 0x00 ‖ stream), UTF-8, read as an unsigned big-endian integer.
 */
export function placementScore(target: string, stream: string): bigint {
  const digest = createHash('sha256').update(target, 'utf8').update(Buffer.of(0)).update(stream, 'utf8').digest();
  return digest.readBigUInt64BE(0);
}

/**
 * The target of `targets` that holds `stream`: the one with the highest placementScore, ties to
 * the lower target string. Order-free and stable: adding a target moves only the streams it now
 * wins (about 1/n of them), removing one moves only its own. Issuer, publisher and ingest all place
 * through this function, so a stream is written where its tokens say. `targets` must be the
 * normalized target URLs (normalizeRedisTarget), the same list everywhere.
 */
export function placeStream(stream: string, targets: readonly string[]): string {
  let best: string | undefined;
  let bestScore = -1n;
  for (const target of targets) {
    const score = placementScore(target, stream);
    if (score > bestScore || (score === bestScore && best !== undefined && target < best)) {
      best = target;
      bestScore = score;
    }
  }
  if (best === undefined) throw new RangeError('placeStream needs at least one target');
  return best;
}
