import { SignJWT, importJWK } from 'jose';
import type { PrivateJwk } from '@streamgate/server';
import { AUDIENCE, ISSUER } from './startFleet.js';

/**
 * Signs a token with the auth service's own key but claims the auth service would never issue:
 * expired, aimed at another Redis, and so on. Defaults are a valid token.
 */
export async function mintToken(
  key: PrivateJwk,
  claims: { stream: string; redis: string; sub?: string; iat?: number; exp?: number; nbf?: number; aud?: string; iss?: string },
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const privateKey = await importJWK(key, key.alg);
  const jwt = new SignJWT({ ver: 1, stream: claims.stream, redis: claims.redis })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject(claims.sub ?? 'alice')
    .setIssuedAt(claims.iat ?? now)
    .setExpirationTime(claims.exp ?? now + 300)
    .setJti(`test-${Math.random().toString(36).slice(2)}`);
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(privateKey);
}
