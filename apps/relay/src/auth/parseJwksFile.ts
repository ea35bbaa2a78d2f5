import { z } from 'zod';
import type { JSONWebKeySet } from 'jose';

const base64url = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding');
const common = {
  kid: z.string().min(1).max(128),
  use: z.literal('sig').optional(),
};

/**
 * One public signing key as RELAY_JWKS_FILE may hold it: the same members the auth service
 * publishes at /.well-known/jwks.json. Members not named here (key_ops, x5c, …) are ignored; a
 * private part (`d`) is refused, because a relay must never hold a key that can sign.
 */
const publicJwkSchema = z
  .discriminatedUnion('kty', [
    z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: base64url, y: base64url, alg: z.literal('ES256').optional(), ...common }),
    z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: base64url, alg: z.literal('EdDSA').optional(), ...common }),
  ])
  .and(z.object({ d: z.never({ error: 'private key material (d) must not be given to a relay' }).optional() }));

export const jwksFileSchema = z.object({
  keys: z
    .array(publicJwkSchema)
    .refine((keys) => new Set(keys.map((k) => k.kid)).size === keys.length, { message: 'every kid must be unique' }),
});

/** Parses the text of a RELAY_JWKS_FILE; the error names the file, the member and the problem. */
export function parseJwksFile(path: string, text: string): { ok: true; jwks: JSONWebKeySet } | { ok: false; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `RELAY_JWKS_FILE ${path} is not JSON (${error instanceof Error ? error.message : 'parse error'})` };
  }
  const parsed = jwksFileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.length > 0 ? i.path.join('.') : '(document)'}: ${i.message}`);
    return { ok: false, message: `RELAY_JWKS_FILE ${path} is not a JWKS of public ES256 / EdDSA keys: ${problems.join('; ')}` };
  }
  return { ok: true, jwks: { keys: parsed.data.keys.map(({ d: _private, ...key }) => key) } };
}
