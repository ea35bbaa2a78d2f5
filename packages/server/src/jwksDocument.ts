import type { PublicSigningJwk, SigningKeySet } from './SigningKeySet.js';

export type JwksDocument = { keys: PublicSigningJwk[] };

/** The JWKS a relay verifies against: the public part of every live key, private parts never. */
export function jwksDocument(keys: SigningKeySet): JwksDocument {
  return { keys: keys.all.map((key) => ({ ...key.publicJwk })) };
}
