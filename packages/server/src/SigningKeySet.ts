import { CompactSign, compactVerify, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { z } from 'zod';
import type { TokenAlgorithm } from '@streamgate/protocol';

/** The public half of a signing key, as the JWKS endpoint publishes it. */
export type PublicSigningJwk = {
  kty: 'EC' | 'OKP';
  crv: 'P-256' | 'Ed25519';
  x: string;
  y?: string;
  kid: string;
  alg: TokenAlgorithm;
  use: 'sig';
};

export type SigningKey = {
  readonly kid: string;
  readonly alg: TokenAlgorithm;
  readonly privateKey: CryptoKey;
  readonly publicJwk: PublicSigningJwk;
};

export type SigningKeySetError = { code: 'signing_keys_invalid'; retryable: false; message: string };
export type SigningKeySetResult = { ok: true; keys: SigningKeySet } | { ok: false; error: SigningKeySetError };

const b64u = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const kid = z.string().min(1).max(128);
const ecKeySchema = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256', { message: 'ES256 keys must use crv "P-256"' }),
  alg: z.literal('ES256'),
  kid,
  x: b64u,
  y: b64u,
  d: b64u,
});
const okpKeySchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519', { message: 'EdDSA keys must use crv "Ed25519"' }),
  alg: z.literal('EdDSA'),
  kid,
  x: b64u,
  d: b64u,
});
const privateJwkSchema = z.discriminatedUnion('alg', [ecKeySchema, okpKeySchema], {
  error: 'alg must be "ES256" or "EdDSA"',
});
type PrivateSigningJwk = z.infer<typeof privateJwkSchema>;

const fail = (message: string): SigningKeySetResult => ({
  ok: false,
  error: { code: 'signing_keys_invalid', retryable: false, message },
});

function describe(error: z.ZodError, index: number, raw: unknown): string {
  const kidValue = typeof raw === 'object' && raw !== null ? (raw as { kid?: unknown }).kid : undefined;
  const label = typeof kidValue === 'string' ? `key[${index}] (kid "${kidValue}")` : `key[${index}]`;
  const issue = error.issues[0];
  if (issue === undefined) return `${label} is invalid`;
  const field = issue.path.length > 0 ? `"${issue.path.join('.')}"` : '(key)';
  // Never echo a value: the field may be the private scalar.
  return `${label}: ${field} ${issue.message}`;
}

/**
 * The keys an auth service signs with. The first key signs; every key is published in the JWKS,
 * so a new key can be published (second) before it signs (first), and an old one can keep
 * verifying outstanding tokens after it stops signing.
 */
export class SigningKeySet {
  private constructor(private list: readonly [SigningKey, ...SigningKey[]]) {}

  /**
   * Replaces the keys in place, for a rotation without a restart: the issuer and the JWKS
   * handler holding this set sign and publish the new keys from their next call. An invalid
   * `json` changes nothing and returns the error (log it, count it: the keys in force stay).
   */
  async reload(json: string): Promise<SigningKeySetResult> {
    const next = await SigningKeySet.fromJson(json);
    if (!next.ok) return next;
    this.list = next.keys.list;
    return { ok: true, keys: this };
  }

  /** The key new tokens are signed with. */
  get current(): SigningKey {
    return this.list[0];
  }

  /** Every live key, signing key first. */
  get all(): readonly SigningKey[] {
    return this.list;
  }

  /** Parses a JSON array of private JWKs (a JWKS object `{ keys: [...] }` is accepted too). */
  static async fromJson(json: string): Promise<SigningKeySetResult> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (error) {
      // JSON.parse quotes the text around the fault, which here is key material: only its place.
      const at = error instanceof Error ? /at position (\d+)/.exec(error.message)?.[1] : undefined;
      return fail(`signing keys are not valid JSON${at === undefined ? '' : ` (at character ${at})`}; the text is not shown`);
    }
    return SigningKeySet.fromJwks(parsed);
  }

  /** Validates and imports private JWKs; each must carry `kid` and `alg` (ES256 or EdDSA). */
  static async fromJwks(input: unknown): Promise<SigningKeySetResult> {
    const list: unknown = typeof input === 'object' && input !== null && !Array.isArray(input) && 'keys' in input ? input.keys : input;
    if (!Array.isArray(list)) return fail('signing keys must be a JSON array of private JWKs');
    if (list.length === 0) return fail('signing keys must contain at least one private JWK');
    const keys: SigningKey[] = [];
    const seen = new Set<string>();
    for (const [index, raw] of (list as unknown[]).entries()) {
      const parsed = privateJwkSchema.safeParse(raw);
      if (!parsed.success) return fail(describe(parsed.error, index, raw));
      const jwk = parsed.data;
      if (seen.has(jwk.kid)) return fail(`key[${index}]: kid "${jwk.kid}" is used by more than one key`);
      seen.add(jwk.kid);
      const imported = await importKey(jwk, index);
      if (!imported.ok) return imported;
      keys.push(imported.key);
    }
    const [first, ...rest] = keys;
    if (first === undefined) return fail('signing keys must contain at least one private JWK');
    return { ok: true, keys: new SigningKeySet([first, ...rest]) };
  }
}

type ImportResult = { ok: true; key: SigningKey } | { ok: false; error: SigningKeySetError };

async function importKey(jwk: PrivateSigningJwk, index: number): Promise<ImportResult> {
  const label = `key[${index}] (kid "${jwk.kid}")`;
  const publicJwk: PublicSigningJwk =
    jwk.kty === 'EC'
      ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y, kid: jwk.kid, alg: jwk.alg, use: 'sig' }
      : { kty: 'OKP', crv: jwk.crv, x: jwk.x, kid: jwk.kid, alg: jwk.alg, use: 'sig' };
  let privateKey: CryptoKey | Uint8Array;
  let publicKey: CryptoKey | Uint8Array;
  try {
    privateKey = await importJWK({ ...jwk, ext: false } satisfies JWK, jwk.alg);
    publicKey = await importJWK(publicJwk, jwk.alg);
  } catch (error) {
    const parts = jwk.kty === 'EC' ? 'x, y and d belong to one P-256 key' : 'x and d belong to one Ed25519 key';
    return { ok: false, error: importError(`${label}: cannot import (${errorText(error)}); check that ${parts}`) };
  }
  // Only symmetric ("oct") JWKs import as bytes, and the schema admits none; this narrows the type.
  if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) {
    return { ok: false, error: importError(`${label}: not an asymmetric key`) };
  }
  // A key whose public part does not belong to its private part would sign tokens no relay can
  // verify; catching that at boot beats a fleet-wide outage after a rotation.
  try {
    const probe = await new CompactSign(new TextEncoder().encode('streamgate-key-check'))
      .setProtectedHeader({ alg: jwk.alg })
      .sign(privateKey);
    await compactVerify(probe, publicKey);
  } catch {
    return { ok: false, error: importError(`${label}: public part (x) does not match the private part (d)`) };
  }
  return { ok: true, key: { kid: jwk.kid, alg: jwk.alg, privateKey, publicJwk } };
}

const importError = (message: string): SigningKeySetError => ({ code: 'signing_keys_invalid', retryable: false, message });
const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
