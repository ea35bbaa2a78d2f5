// The token checked against docs/protocol.md §10 as written, not against the package's own
// schema: header (alg ES256 or EdDSA, kid, typ JWT), signature by the published JWKS, and every
// claim of the table with its type and value.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { jwksDocument } from '@streamgate/server';
import type { RelaySubscription, SigningKeySet } from '@streamgate/server';

export type DocumentedClaims = {
  iss: string;
  aud: string | string[];
  sub: string;
  exp: number;
  iat: number;
  nbf?: number;
  jti: string;
  ver: 1;
  stream: string;
  redis: string;
};

export type Expected = {
  keys: SigningKeySet;
  issuer: string;
  audience: string;
  subject: string;
  stream: string;
  /** Normalized: `scheme://host:port/db`, lower-case host. */
  redis: string;
  ttlSeconds: number;
  issuedNotBefore: number;
};

const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0;

export async function checkRelayToken(sub: RelaySubscription<unknown>, expected: Expected): Promise<DocumentedClaims> {
  const problems: string[] = [];
  const header = decodeProtectedHeader(sub.token);
  if (header.alg !== 'ES256' && header.alg !== 'EdDSA') problems.push(`header alg ${String(header.alg)}`);
  if (typeof header.kid !== 'string' || header.kid.length === 0) problems.push('header kid missing');
  if (header.typ !== 'JWT') problems.push(`header typ ${String(header.typ)}`);
  const { payload } = await jwtVerify(sub.token, createLocalJWKSet(jwksDocument(expected.keys)), {
    issuer: expected.issuer,
    audience: expected.audience,
    algorithms: ['ES256', 'EdDSA'],
  });
  const c = payload as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  if (c.iss !== expected.issuer) problems.push(`iss ${String(c.iss)}`);
  const aud = c.aud;
  if (!(aud === expected.audience || (Array.isArray(aud) && aud.length > 0 && aud.includes(expected.audience)))) problems.push('aud');
  if (c.sub !== expected.subject) problems.push(`sub ${String(c.sub)}`);
  if (!isInt(c.iat) || c.iat < expected.issuedNotBefore || c.iat > now) problems.push(`iat ${String(c.iat)}`);
  if (!isInt(c.exp) || !isInt(c.iat) || c.exp - c.iat !== expected.ttlSeconds)
    problems.push(`exp ${String(c.exp)} (ttl ${expected.ttlSeconds})`);
  if (c.nbf !== undefined && !isInt(c.nbf)) problems.push(`nbf ${String(c.nbf)}`);
  if (typeof c.jti !== 'string' || c.jti.length < 1 || c.jti.length > 128) problems.push(`jti ${String(c.jti)}`);
  if (c.ver !== 1) problems.push(`ver ${String(c.ver)}`);
  if (c.stream !== expected.stream) problems.push(`stream ${String(c.stream)}`);
  if (c.redis !== expected.redis) problems.push(`redis ${String(c.redis)}`);
  // RelaySubscription mirrors the claims: the stream, and expiry in milliseconds (the claim is seconds).
  if (sub.stream !== expected.stream) problems.push(`subscription stream ${sub.stream}`);
  if (!isInt(c.exp) || sub.expiresAt !== c.exp * 1000) problems.push(`expiresAt ${sub.expiresAt}`);
  if (problems.length > 0) throw new Error(`the relay token does not match docs/protocol.md §10: ${problems.join('; ')}`);
  return c as DocumentedClaims;
}
