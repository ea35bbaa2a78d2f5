import { SignJWT, importJWK } from 'jose';
import type { PrivateJwk } from '@streamgate/server';

export const BENCH_AUDIENCE = 'streamgate-bench';
export const BENCH_ISSUER = 'streamgate-bench';

/** One relay token per stream, naming `redisUrl` (an instance or a cluster seed), valid for an hour. */
export async function mintBenchTokens(key: PrivateJwk, redisUrl: string, streams: readonly string[]): Promise<string[]> {
  const privateKey = await importJWK(key, key.alg);
  const now = Math.floor(Date.now() / 1000);
  return Promise.all(
    streams.map((stream, i) =>
      new SignJWT({ ver: 1, stream, redis: redisUrl })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
        .setIssuer(BENCH_ISSUER)
        .setAudience(BENCH_AUDIENCE)
        .setSubject('bench')
        .setIssuedAt(now)
        .setExpirationTime(now + 3_600)
        .setJti(`bench-${i}`)
        .sign(privateKey),
    ),
  );
}
