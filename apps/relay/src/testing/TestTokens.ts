import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK, JWTVerifyGetKey } from 'jose';

export interface TestClaims {
  readonly stream: string;
  readonly redis?: string;
  readonly sub?: string;
  /** Epoch seconds. */
  readonly iat?: number;
  readonly exp?: number;
  readonly kid?: string | null;
  readonly typ?: string;
  readonly extra?: Record<string, unknown>;
}

/**
 * A token issuer for in-process tests: a real ES256 key pair, tokens signed with jose exactly as
 * the auth service signs them, and the matching key set for a TokenVerifier.
 */
export class TestTokens {
  static readonly AUDIENCE = 'streamgate-relay-test';
  static readonly ISSUER = 'https://auth.test';
  static readonly REDIS = 'redis://memory.test:6379/0';
  /** Allowlisted too, with no hub: where a moved stream's new tokens point. */
  static readonly OTHER_REDIS = 'redis://memory-other.test:6379/0';
  static readonly KID = 'test-k1';

  private constructor(
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
    /** Epoch milliseconds used for default `iat` / `exp`. */
    private readonly now: () => number,
  ) {}

  static async create(now: () => number = () => Date.now()): Promise<TestTokens> {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: TestTokens.KID, alg: 'ES256', use: 'sig' };
    return new TestTokens(privateKey, jwk, now);
  }

  get keys(): JWTVerifyGetKey {
    return createLocalJWKSet({ keys: [this.publicJwk] });
  }

  async sign(claims: TestClaims): Promise<string> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const iat = claims.iat ?? nowSeconds;
    const header: { alg: string; kid?: string; typ?: string } = { alg: 'ES256', typ: claims.typ ?? 'JWT' };
    if (claims.kid !== null) header.kid = claims.kid ?? TestTokens.KID;
    return new SignJWT({ ...claims.extra, ver: 1, stream: claims.stream, redis: claims.redis ?? TestTokens.REDIS })
      .setProtectedHeader(header)
      .setIssuer(TestTokens.ISSUER)
      .setAudience(TestTokens.AUDIENCE)
      .setSubject(claims.sub ?? 'alice')
      .setIssuedAt(iat)
      .setExpirationTime(claims.exp ?? iat + 300)
      .setJti(`jti-${Math.random().toString(36).slice(2)}`)
      .sign(this.privateKey);
  }
}
