import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { CLAIMS_VERSION, normalizeRedisTarget, relayClaimsSchema } from '@streamgate/protocol';
import type { RelayClaims, RelaySubscription, StreamRef } from '@streamgate/protocol';
import type { SigningKeySet } from './SigningKeySet.js';

/** Upper bound on a token's life: a relay trusts a token until it expires, so revocation is by expiry. */
export const MAX_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export type TokenIssuerOptions = {
  keys: SigningKeySet;
  issuer: string;
  audience: string | readonly string[];
  /** Default Redis target named in tokens, e.g. `redis://streams:6379/0`; credentials are refused. */
  redis: string;
  ttlSeconds?: number;
  /** Milliseconds since the epoch; injectable so tests can pin time. */
  now?: () => number;
};

export type IssueOptions = {
  /** Who the token is for; the relay logs it and may bind a socket to it. */
  subject: string;
  /** Overrides the issuer's default Redis target for this token. */
  redis?: string;
  ttlSeconds?: number;
};

export interface TokenIssuer {
  issue<T>(stream: StreamRef<T>, options: IssueOptions): Promise<RelaySubscription<T>>;
}

function redisTarget(raw: string, what: string): string {
  const target = normalizeRedisTarget(raw);
  if (target === null) {
    throw new TypeError(
      `${what} must be a redis:// or rediss:// URL with a host, optional port and db, and no credentials (the relay adds its own)`,
    );
  }
  return target;
}

function ttl(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_TOKEN_TTL_SECONDS) {
    throw new RangeError(`${what} must be an integer between 1 and ${MAX_TOKEN_TTL_SECONDS}, got ${value}`);
  }
  return value;
}

/**
 * Mints relay tokens. Call `issue` only after the product's own authorization passed: the relay
 * trusts the token and nothing else. Invalid options are programmer errors and throw.
 */
export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { keys, issuer } = options;
  if (issuer.length === 0) throw new TypeError('issuer must not be empty');
  const audience = typeof options.audience === 'string' ? options.audience : [...options.audience];
  if (audience.length === 0) throw new TypeError('audience must not be empty');
  const defaultRedis = redisTarget(options.redis, 'redis');
  const defaultTtl = ttl(options.ttlSeconds ?? 300, 'ttlSeconds');
  const now = options.now ?? Date.now;

  return {
    async issue<T>(stream: StreamRef<T>, issue: IssueOptions): Promise<RelaySubscription<T>> {
      const iat = Math.floor(now() / 1000);
      const exp = iat + (issue.ttlSeconds === undefined ? defaultTtl : ttl(issue.ttlSeconds, 'ttlSeconds'));
      const candidate: RelayClaims = {
        iss: issuer,
        aud: audience,
        sub: issue.subject,
        iat,
        nbf: iat,
        exp,
        jti: randomBytes(16).toString('base64url'),
        ver: CLAIMS_VERSION,
        stream: stream.name,
        redis: issue.redis === undefined ? defaultRedis : redisTarget(issue.redis, 'redis'),
      };
      // The relay will parse these claims with the same schema; failing here names the bad field
      // to the backend developer instead of producing a token every relay rejects.
      const checked = relayClaimsSchema.safeParse(candidate);
      if (!checked.success) {
        const issue0 = checked.error.issues[0];
        throw new TypeError(`cannot issue token: ${issue0?.path.join('.') ?? 'claims'}: ${issue0?.message ?? 'invalid'}`);
      }
      const key = keys.current;
      const token = await new SignJWT(checked.data).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
      return { token, stream: stream.name, expiresAt: exp * 1000 };
    },
  };
}
