import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import type { TokenAlgorithm } from '@streamgate/protocol';

/** A private JWK as `SigningKeySet.fromJwks` accepts it. */
export type PrivateJwk = JWK & { kid: string; alg: TokenAlgorithm; d: string };

/** Generates a private signing JWK, for development and tests; production keys come from a secret. */
export async function generateSigningKey(alg: TokenAlgorithm, kid: string): Promise<PrivateJwk> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk = await exportJWK(privateKey);
  if (typeof jwk.d !== 'string') throw new Error('generated key exported without its private part');
  return { ...jwk, d: jwk.d, kid, alg };
}
