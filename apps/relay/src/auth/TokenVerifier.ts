import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { JWTVerifyGetKey, ProtectedHeaderParameters } from 'jose';
import { relayClaimsSchema, relayError } from '@streamgate/protocol';
import type { RelayClaims, RelayError, TokenAlgorithm } from '@streamgate/protocol';

export type VerifyResult = { ok: true; claims: RelayClaims } | { ok: false; error: RelayError };

export interface TokenVerifierOptions {
  readonly keys: JWTVerifyGetKey;
  /** From configuration only: the token's own `alg` header never chooses the algorithm. */
  readonly algorithms: readonly TokenAlgorithm[];
  readonly audience: string;
  readonly issuer: string;
  readonly clockSkewSeconds: number;
  /** Canonical Redis target URLs this relay may read (see normalizeRedisTarget). */
  readonly redisAllowlist: ReadonlySet<string>;
  /** Epoch milliseconds that `exp` and `nbf` are checked against; the system clock by default. */
  readonly now?: () => number;
}

/** Thrown from the key lookup, which jose calls only after the header parsed and its alg is allowed. */
class HeaderInvalid extends Error {}

/** The key lookup failed for want of the keys (the key set's endpoint down, or answering an error), not for the token. */
class KeysUnavailable extends Error {}

/** What a key lookup answers about the token itself: anything else it throws is the key set's failure. */
function isAnswerAboutToken(error: unknown): boolean {
  return (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JOSENotSupported ||
    error instanceof errors.JOSEAlgNotAllowed
  );
}

/**
 * Three base64url parts, unpadded (RFC 7515 §7.1): jose's decoder would let `=` padding through.
 * The signature may be empty here, so that an `alg: none` token is refused for its algorithm.
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Checks a relay token's signature and claims, and nothing else: the relay never asks the auth
 * backend, which is the point of the design. Every refusal is a distinct, typed code.
 *
 * Policy beyond the claim schema: the header must name a `kid` (a key set with several keys of
 * one type would otherwise be tried by type alone, and rotation relies on kids); `typ` is not
 * checked (the `ver`, `stream` and `redis` claims already set a relay token apart from any other
 * JWT of the issuer); claims the schema does not name are ignored.
 */
export class TokenVerifier {
  private readonly keys: JWTVerifyGetKey;

  constructor(private readonly options: TokenVerifierOptions) {
    this.keys = async (header, token) => {
      if (header.kid === undefined) throw new HeaderInvalid('header: kid is required');
      if (typeof header.kid !== 'string') throw new HeaderInvalid('header: kid must be a string');
      try {
        return await options.keys(header, token);
      } catch (error) {
        if (isAnswerAboutToken(error)) throw error;
        // A JWKS endpoint answering 503 is an outage to retry, not a malformed token.
        throw new KeysUnavailable(`signing keys could not be fetched: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
  }

  async verify(token: string): Promise<VerifyResult> {
    const o = this.options;
    if (!COMPACT_JWS.test(token)) return { ok: false, error: relayError('token_malformed', 'token is not a well-formed JWS compact JWT') };
    const headerError = checkHeader(token);
    if (headerError !== null) return { ok: false, error: headerError };
    let payload: unknown;
    try {
      const verified = await jwtVerify(token, this.keys, {
        algorithms: [...o.algorithms],
        audience: o.audience,
        issuer: o.issuer,
        clockTolerance: o.clockSkewSeconds,
        ...(o.now === undefined ? {} : { currentDate: new Date(o.now()) }),
        requiredClaims: ['exp', 'iat', 'sub', 'jti'],
      });
      payload = verified.payload;
    } catch (error) {
      return { ok: false, error: mapJoseError(error) };
    }
    const parsed = relayClaimsSchema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue === undefined ? 'claims' : issue.path.join('.') || 'claims';
      return { ok: false, error: relayError('token_claims_invalid', `claim ${where}: ${issue?.message ?? 'invalid'}`) };
    }
    if (!o.redisAllowlist.has(parsed.data.redis)) {
      return { ok: false, error: relayError('redis_not_allowed', `redis target ${parsed.data.redis} is not in this relay's allowlist`) };
    }
    return { ok: true, claims: parsed.data };
  }
}

/**
 * The header checks jose would answer with a less telling code: without an `alg` it finds the
 * token not well-formed, though a missing algorithm is not one the relay accepts; with a `crit`
 * it answers "not supported", which maps to an algorithm refusal. A `crit` names extensions the
 * recipient must understand or refuse the token (RFC 7515 §4.1.11), and the relay understands
 * none: the token is malformed for it.
 */
function checkHeader(token: string): RelayError | null {
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch (error) {
    return relayError('token_malformed', `token header is not a JSON object (${error instanceof Error ? error.message : 'unreadable'})`);
  }
  if (typeof header.alg !== 'string') return relayError('token_algorithm_not_allowed', 'header: alg is required');
  if (header.crit !== undefined) return relayError('token_malformed', 'header: crit names extensions the relay does not support');
  return null;
}

/** What jwtVerify threw, the key lookup's own errors included, as the relay's refusal. */
export function mapJoseError(error: unknown): RelayError {
  if (error instanceof HeaderInvalid) return relayError('token_malformed', error.message);
  // Every failure to get the keys (a timeout, an invalid set, an error status, fetch failing) is this one.
  if (error instanceof KeysUnavailable) return relayError('jwks_unavailable', error.message);
  if (error instanceof errors.JWTExpired) {
    const exp = error.payload.exp;
    return relayError('token_expired', typeof exp === 'number' ? `token expired at ${exp}` : 'token has expired');
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        // Only a time in the future: an `nbf` that is not a number is a claim that fails its schema.
        if (error.reason === 'check_failed') return relayError('token_not_yet_valid', 'token is not valid yet (nbf)');
        return relayError('token_claims_invalid', `claim nbf: ${error.reason}`);
      case 'aud':
        return relayError('token_audience_invalid', 'token audience does not match this relay');
      case 'iss':
        return relayError('token_issuer_invalid', 'token issuer does not match this relay');
      default:
        return relayError('token_claims_invalid', `claim ${error.claim}: ${error.reason}`);
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return relayError('token_algorithm_not_allowed', 'token algorithm is not allowed');
  if (error instanceof errors.JWKSNoMatchingKey) return relayError('token_kid_unknown', 'no signing key matches the token kid');
  if (error instanceof errors.JWSSignatureVerificationFailed) return relayError('token_signature_invalid', 'token signature is invalid');
  if (error instanceof errors.JOSENotSupported)
    return relayError('token_algorithm_not_allowed', 'token algorithm or key type is not supported');
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return relayError('token_malformed', 'token is not a well-formed JWS compact JWT');
  }
  if (error instanceof errors.JOSEError) return relayError('token_malformed', error.message);
  // Not jose's and not the key lookup's: an unexpected fault, refused as retryable rather than final.
  return relayError('jwks_unavailable', error instanceof Error ? error.message : 'signing keys unavailable');
}
