import { z } from 'zod';
import { normalizeRedisTarget } from '@streamgate/protocol';
import { MAX_TOKEN_TTL_SECONDS } from '@streamgate/server';

export type SigningKeySource =
  | { kind: 'inline'; json: string }
  | { kind: 'file'; path: string }
  | { kind: 'generate' };

export type AuthConfig = {
  host: string;
  port: number;
  signingKeys: SigningKeySource;
  issuer: string;
  audience: string;
  tokenTtlSeconds: number;
  redisUrl: string;
  /** Streams under these prefixes are ingest-backed: minting a token for one registers demand. */
  demandPrefixes: readonly string[];
  demandTtlMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
};

export type AuthConfigError = { code: 'config_invalid'; retryable: false; variable: string; message: string };
export type AuthConfigResult = { ok: true; config: AuthConfig } | { ok: false; error: AuthConfigError };

const blankToUndefined = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optionalText = z.preprocess(blankToUndefined, z.string().optional());
const intIn = (min: number, max: number, fallback: number, fix: string) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: `must be an integer; ${fix}` })
      .int(`must be an integer; ${fix}`)
      .min(min, `must be at least ${min}; ${fix}`)
      .max(max, `must be at most ${max}; ${fix}`)
      .default(fallback),
  );

const envSchema = z.object({
  AUTH_HOST: z.preprocess(blankToUndefined, z.string().default('0.0.0.0')),
  AUTH_PORT: intIn(0, 65_535, 8080, 'set a TCP port, or 0 for any free port'),
  AUTH_SIGNING_KEYS: optionalText,
  AUTH_SIGNING_KEYS_FILE: optionalText,
  AUTH_DEV_GENERATE_KEYS: z.preprocess(
    blankToUndefined,
    z.enum(['true', 'false'], { error: 'must be "true" or "false"' }).default('false'),
  ),
  AUTH_ISSUER: z.preprocess(
    blankToUndefined,
    z.string({ error: 'is required: set the token issuer (iss), the same value the relays expect' }),
  ),
  AUTH_AUDIENCE: z.preprocess(
    blankToUndefined,
    z.string({ error: 'is required: set the token audience (aud), the same value the relays expect' }),
  ),
  AUTH_TOKEN_TTL_SECONDS: intIn(1, MAX_TOKEN_TTL_SECONDS, 300, 'set the token lifetime in seconds'),
  AUTH_REDIS_URL: z.preprocess(
    blankToUndefined,
    z
      .string({ error: 'is required: set the Redis URL named in tokens, e.g. redis://streams:6379/0' })
      .refine((raw) => normalizeRedisTarget(raw) !== null, {
        message:
          'must be a redis:// or rediss:// URL with host, optional port and db, and no credentials (relays hold their own)',
      }),
  ),
  AUTH_DEMAND_PREFIXES: z.preprocess(
    blankToUndefined,
    z
      .string()
      .default('')
      .transform((raw) => raw.split(',').map((p) => p.trim()).filter(Boolean)),
  ),
  AUTH_DEMAND_TTL_MS: intIn(1_000, 3_600_000, 30_000, 'set how long a minted token keeps its stream wanted, in ms'),
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
  ),
  NODE_ENV: optionalText,
});

const invalid = (variable: string, message: string): AuthConfigResult => ({
  ok: false,
  error: { code: 'config_invalid', retryable: false, variable, message: `${variable} ${message}` },
});

/** Parses the process environment once, at boot. Pure: reads no files (see loadSigningKeys). */
export function parseAuthConfig(env: Readonly<Record<string, string | undefined>>): AuthConfigResult {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    return invalid(variable, issue?.message ?? 'is invalid');
  }
  const e = parsed.data;
  const sources = [
    e.AUTH_SIGNING_KEYS === undefined ? null : 'AUTH_SIGNING_KEYS',
    e.AUTH_SIGNING_KEYS_FILE === undefined ? null : 'AUTH_SIGNING_KEYS_FILE',
    e.AUTH_DEV_GENERATE_KEYS === 'true' ? 'AUTH_DEV_GENERATE_KEYS' : null,
  ].filter((name) => name !== null);
  if (sources.length === 0) {
    return invalid(
      'AUTH_SIGNING_KEYS',
      'is required: set it to a JSON array of private JWKs, or set AUTH_SIGNING_KEYS_FILE to a file holding one (AUTH_DEV_GENERATE_KEYS=true for development)',
    );
  }
  if (sources.length > 1) {
    return invalid(sources[1] ?? 'AUTH_SIGNING_KEYS', `conflicts with ${sources[0]}: set exactly one key source`);
  }
  let signingKeys: SigningKeySource;
  if (e.AUTH_SIGNING_KEYS !== undefined) signingKeys = { kind: 'inline', json: e.AUTH_SIGNING_KEYS };
  else if (e.AUTH_SIGNING_KEYS_FILE !== undefined) signingKeys = { kind: 'file', path: e.AUTH_SIGNING_KEYS_FILE };
  else signingKeys = { kind: 'generate' };
  // A generated key dies with the process, so every restart would invalidate every token.
  if (signingKeys.kind === 'generate' && e.NODE_ENV === 'production') {
    return invalid('AUTH_DEV_GENERATE_KEYS', 'is for development only: unset it and provide AUTH_SIGNING_KEYS or AUTH_SIGNING_KEYS_FILE');
  }
  return {
    ok: true,
    config: {
      host: e.AUTH_HOST,
      port: e.AUTH_PORT,
      signingKeys,
      issuer: e.AUTH_ISSUER,
      audience: e.AUTH_AUDIENCE,
      tokenTtlSeconds: e.AUTH_TOKEN_TTL_SECONDS,
      redisUrl: e.AUTH_REDIS_URL,
      demandPrefixes: e.AUTH_DEMAND_PREFIXES,
      demandTtlMs: e.AUTH_DEMAND_TTL_MS,
      logLevel: e.LOG_LEVEL,
    },
  };
}
