import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { CLAIMS_VERSION, relayClaimsSchema } from '@streamgate/protocol';
import type { RelayClaims, RelaySubscription, StreamRef } from '@streamgate/protocol';
import { redisTarget, redisTargetChooser } from './redisTargetChooser.js';
import type { RedisTargetChoice } from './redisTargetChooser.js';
import type { SigningKeySet } from './SigningKeySet.js';
import { integerOption } from './integerOption.js';

export type { RedisTargetChoice } from './redisTargetChooser.js';

/** Upper bound on a token's life: a relay trusts a token until it expires or a revocation covers it (createRevoker). */
export const MAX_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export type TokenIssuerOptions = {
  keys: SigningKeySet;
  issuer: string;
  audience: string | readonly string[];
  /**
   * The Redis tokens name for each stream (RedisTargetChoice): one target, e.g.
   * `redis://streams:6379/0` or `redis-cluster://streams:7000`; a list of instances, each stream
   * placed with `placeStream` (the publisher's and ingest's function: give them the same list);
   * or a function `(stream) => target`. Credentials are refused.
   */
  redis: RedisTargetChoice;
  ttlSeconds?: number;
  /** Milliseconds since the epoch; injectable so tests can pin time. */
  now?: () => number;
};

export type IssueOptions = {
  /** Who the token is for; the relay logs it and may bind a socket to it. */
  subject: string;
  /** Overrides the issuer's choice for this token: a target, a list to place the stream on, or a function. */
  redis?: RedisTargetChoice;
  ttlSeconds?: number;
};

export interface TokenIssuer {
  issue<T>(stream: StreamRef<T>, options: IssueOptions): Promise<RelaySubscription<T>>;
}

/** A token lifetime in whole seconds, 1 to MAX_TOKEN_TTL_SECONDS, or a RangeError naming `what`. */
export function ttl(value: number, what: string): number {
  return integerOption(what, value, 1, MAX_TOKEN_TTL_SECONDS);
}

// A per-token string is the common override; a list or function here is placed once, for this token.
function chosenRedis(choice: RedisTargetChoice, stream: string): string {
  return typeof choice === 'string' ? redisTarget(choice, 'redis') : redisTargetChooser(choice, 'redis')(stream);
}

/**
 * Mints relay tokens. Call `issue` only after the product's own authorization passed: the relay
 * trusts the token and nothing else. Invalid options are programmer errors and throw.
 */
export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { keys, issuer } = options;
  // From plain JavaScript: a missing key set would fail every issue, reading `current` of undefined.
  if (typeof keys !== 'object' || (keys as unknown) === null || !('current' in keys)) {
    throw new TypeError('keys must be a SigningKeySet (SigningKeySet.fromJson or fromJwks)');
  }
  if (issuer.length === 0) throw new TypeError('issuer must not be empty');
  const audience = typeof options.audience === 'string' ? options.audience : [...options.audience];
  if (audience.length === 0) throw new TypeError('audience must not be empty');
  const defaultRedis = redisTargetChooser(options.redis, 'redis');
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
        redis: issue.redis === undefined ? defaultRedis(stream.name) : chosenRedis(issue.redis, stream.name),
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
