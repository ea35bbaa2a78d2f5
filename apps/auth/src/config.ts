import { hostname } from 'node:os';
import { z } from 'zod';
import { envBool, envEnum, envInt, envList, envText, parseEnv, whenValid } from '@streamgate/boot';
import type { ConfigResult, Env } from '@streamgate/boot';
import { OPS_STREAM_DEFAULT, podNameCheck } from '@streamgate/ops';
import { normalizeRedisTarget, normalizeStreamTarget, redisTargetItemProblem, splitRedisUrl, streamNameSchema } from '@streamgate/protocol';
import { MAX_TOKEN_TTL_SECONDS } from '@streamgate/server';
import type { CorsOptions } from './CorsPolicy.js';
import { jetStreamDemandTargetCheck, jetStreamDemandTargetProblem, resolveJetStreamDemandTarget } from './jetStreamDemandTarget.js';

/** A key file is followed while auth runs (watchSigningKeyFile), re-read at least every `pollMs`. */
export type SigningKeySource = { kind: 'inline'; json: string } | { kind: 'file'; path: string; pollMs: number } | { kind: 'generate' };

export type AuthConfig = {
  host: string;
  port: number;
  signingKeys: SigningKeySource;
  issuer: string;
  audience: string;
  tokenTtlSeconds: number;
  /**
   * The targets tokens name, normalized (normalizeStreamTarget): one (AUTH_REDIS_URL, a Redis
   * instance or cluster, or a NATS JetStream target, docs/protocol.md §17), or the Redis instances
   * streams are spread over (AUTH_REDIS_TARGETS), each stream on placeStream(stream, redisTargets)
   * (docs/protocol.md §16).
   */
  redisTargets: readonly string[];
  /** Streams under these prefixes are ingest-backed: minting a token for one registers demand. */
  demandPrefixes: readonly string[];
  demandTtlMs: number;
  /**
   * The Redis (normalized) where demand for streams on a JetStream target is registered: such a
   * target has no Redis of its own. Null when unset (then no target is a JetStream one, or demand is off).
   */
  jetStreamDemandTarget: string | null;
  /** Serve the demo router (any user but "mallory" gets a token for any demo:* stream). */
  demoRouter: boolean;
  /** Null: no CORS headers, preflights refused. */
  cors: CorsOptions | null;
  /** Error responses carry stack traces only in development. */
  exposeStackTraces: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Names this service in its operations snapshots. */
  podName: string;
  /** The operations stream: where this service publishes its snapshots and what ops.token opens. Null: off. */
  ops: AuthOpsConfig | null;
  /** Lower-case hex sha256 of the operator credential; null: ops.token is off (PRECONDITION_FAILED). */
  operatorCredentialSha256: string | null;
};

export type AuthOpsConfig = {
  /** As configured, credentials included: this service's own connection. */
  redisUrl: string;
  /** `redis://host:port/db` without credentials: what ops tokens name (the relay adds its own). */
  target: string;
  stream: string;
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
// The log every token names: a Redis, or a JetStream target (the claim is `redis` for both).
const redisUrlCheck = (raw: string): string | null =>
  normalizeStreamTarget(raw.trim()) === null
    ? 'must be a redis:// or rediss:// URL with host, optional port and db, a redis-cluster:// or rediss-cluster:// URL with host and optional port, or a nats:// or tls:// JetStream URL with comma-separated seeds and an optional /STREAM, and no credentials (relays hold their own); set it to one, e.g. redis://streams:6379/0, redis-cluster://streams:7000 or nats://n1:4222,n2:4222/STREAMGATE'
    : null;
const redisTargetItemCheck = (item: string): string | null =>
  redisTargetItemProblem(item, "list targets as the relays' allowlist does, e.g. redis://r0:6379/0,redis://r1:6379/0");
const opsRedisUrlCheck = (raw: string): string | null =>
  splitRedisUrl(raw) === null
    ? 'must be a redis:// or rediss:// URL with host, optional port and db, or a redis-cluster:// or rediss-cluster:// URL with host and optional port; set it to one, e.g. redis://streams:6379/0'
    : null;
const streamNameCheck = (raw: string): string | null =>
  streamNameSchema.safeParse(raw).success
    ? null
    : 'is not a stream name (letters, digits and _ . : { } - /, at most 200); set one, e.g. streamgate:ops';
// An Origin header is scheme://host[:port] exactly: no path, no trailing slash, lower-case host.
const originCheck = (item: string): string | null =>
  item === '*' || (URL.canParse(item) && /^https?:$/.test(new URL(item).protocol) && new URL(item).origin === item)
    ? null
    : `"${item}" is not an origin; list origins exactly as browsers send them, e.g. https://app.example.com or http://localhost:5173 (no path, no trailing slash)`;

/** Every variable the auth service reads, parsed once at boot. */
export const authConfigSchema = z
  .object({
    AUTH_HOST: envText({ fallback: '0.0.0.0' }),
    AUTH_PORT: envInt({ fallback: 8080, min: 0, max: 65_535, meaning: '0 = any free port', fix: 'set it to a port number' }),
    AUTH_SIGNING_KEYS: envText({ optional: 'and set AUTH_SIGNING_KEYS_FILE instead' }),
    AUTH_SIGNING_KEYS_FILE: envText({ optional: 'and set AUTH_SIGNING_KEYS instead' }),
    AUTH_SIGNING_KEYS_POLL_MS: envInt({ fallback: 2_000, min: 100, max: 600_000, fix: 'set how often, in ms, the key file is re-read' }),
    AUTH_DEV_GENERATE_KEYS: envBool({ fallback: false }),
    AUTH_ISSUER: envText({ required: 'set it to the token issuer (iss), the same value the relays expect (RELAY_TOKEN_ISSUER)' }),
    AUTH_AUDIENCE: envText({ required: 'set it to the token audience (aud), the same value the relays expect (RELAY_TOKEN_AUDIENCE)' }),
    AUTH_TOKEN_TTL_SECONDS: envInt({ fallback: 300, min: 1, max: MAX_TOKEN_TTL_SECONDS, fix: 'set the token lifetime in seconds' }),
    AUTH_REDIS_URL: envText({ optional: 'and set AUTH_REDIS_TARGETS instead', check: redisUrlCheck }),
    AUTH_REDIS_TARGETS: envList({
      fallback: [],
      fallbackText: 'none (one Redis: AUTH_REDIS_URL)',
      each: redisTargetItemCheck,
      nonEmpty: true,
    }),
    AUTH_DEMAND_PREFIXES: envList({ fallback: [] }),
    AUTH_DEMAND_TTL_MS: envInt({
      fallback: 30_000,
      min: 1_000,
      max: 3_600_000,
      fix: 'set how long a minted token keeps its stream wanted, in ms',
    }),
    AUTH_JETSTREAM_DEMAND_TARGET: envText({
      optional: 'when AUTH_REDIS_URL names no JetStream target or AUTH_DEMAND_PREFIXES is unset',
      check: jetStreamDemandTargetCheck,
    }),
    AUTH_DEMO_ROUTER: envBool({ fallback: false }),
    AUTH_CORS_ORIGINS: envList({ fallback: [], fallbackText: 'none (no CORS headers)', each: originCheck }),
    AUTH_CORS_CREDENTIALS: envBool({ fallback: false }),
    AUTH_CORS_MAX_AGE_SECONDS: envInt({
      fallback: 600,
      min: 0,
      max: 86_400,
      fix: 'set how long browsers may cache a preflight answer, in seconds',
    }),
    LOG_LEVEL: envEnum(LOG_LEVELS, { fallback: 'info' }),
    AUTH_POD_NAME: envText({ fallback: hostname(), fallbackText: 'the hostname', check: podNameCheck }),
    // Operations stream (docs/protocol.md §"Operations stream"): snapshots out, and ops.token for operators.
    AUTH_OPS_REDIS_URL: envText({ optional: 'to publish no operations snapshots (and serve no ops.token)', check: opsRedisUrlCheck }),
    AUTH_OPS_STREAM: envText({ fallback: OPS_STREAM_DEFAULT, check: streamNameCheck }),
    AUTH_OPERATOR_CREDENTIAL_SHA256: envText({
      optional: 'to turn ops.token off',
      check: (raw) =>
        /^[0-9a-fA-F]{64}$/.test(raw.trim())
          ? null
          : 'must be the hex sha256 of the operator credential (64 hex digits); set it to the output of: printf %s "$CREDENTIAL" | sha256sum',
    }),
    NODE_ENV: envText({ optional: 'for development' }),
  })
  .superRefine(
    (e, ctx) => {
      const sources = [
        e.AUTH_SIGNING_KEYS === undefined ? null : 'AUTH_SIGNING_KEYS',
        e.AUTH_SIGNING_KEYS_FILE === undefined ? null : 'AUTH_SIGNING_KEYS_FILE',
        e.AUTH_DEV_GENERATE_KEYS ? 'AUTH_DEV_GENERATE_KEYS' : null,
      ].filter((name) => name !== null);
      if (sources.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_SIGNING_KEYS'],
          message:
            'is required; set it to a JSON array of private JWKs, or set AUTH_SIGNING_KEYS_FILE to a file holding one (AUTH_DEV_GENERATE_KEYS=true for development)',
        });
      } else if (sources.length > 1) {
        ctx.addIssue({
          code: 'custom',
          path: [sources[1] ?? 'AUTH_SIGNING_KEYS'],
          message: `conflicts with ${sources[0]}; set exactly one key source`,
        });
      } else if (e.AUTH_DEV_GENERATE_KEYS && e.NODE_ENV === 'production') {
        // A generated key dies with the process, so every restart would invalidate every token.
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_DEV_GENERATE_KEYS'],
          message: 'is for development only (NODE_ENV=production); unset it and provide AUTH_SIGNING_KEYS or AUTH_SIGNING_KEYS_FILE',
        });
      }
    },
    whenValid('AUTH_SIGNING_KEYS', 'AUTH_SIGNING_KEYS_FILE', 'AUTH_DEV_GENERATE_KEYS', 'NODE_ENV'),
  )
  .superRefine(
    (e, ctx) => {
      // The demo router gives any user but one a token for any demo stream: never a production service.
      if (e.AUTH_DEMO_ROUTER && e.NODE_ENV === 'production') {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_DEMO_ROUTER'],
          message:
            'is refused with NODE_ENV=production (the demo router authorizes any user for any demo:* stream); unset it and mount relayTokenProcedure in your own backend (docs/backend-guide.md)',
        });
      }
    },
    whenValid('AUTH_DEMO_ROUTER', 'NODE_ENV'),
  )
  .superRefine(
    (e, ctx) => {
      if (e.AUTH_CORS_ORIGINS.includes('*') && e.AUTH_CORS_ORIGINS.length > 1) {
        ctx.addIssue({ code: 'custom', path: ['AUTH_CORS_ORIGINS'], message: 'mixes * with origins; set either * or a list of origins' });
      }
      if (!e.AUTH_CORS_CREDENTIALS) return;
      if (e.AUTH_CORS_ORIGINS.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_CORS_CREDENTIALS'],
          message: 'has no effect without AUTH_CORS_ORIGINS; set the origins allowed to send credentials, or unset it',
        });
      } else if (e.AUTH_CORS_ORIGINS.includes('*')) {
        // Browsers refuse credentials with a wildcard origin, and any site could send them if they did not.
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_CORS_CREDENTIALS'],
          message: 'is refused with AUTH_CORS_ORIGINS=*; list the exact origins allowed to send credentials',
        });
      }
    },
    whenValid('AUTH_CORS_ORIGINS', 'AUTH_CORS_CREDENTIALS'),
  )
  .superRefine(
    (e, ctx) => {
      if (e.AUTH_REDIS_URL === undefined && e.AUTH_REDIS_TARGETS.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_REDIS_URL'],
          message:
            'is required; set it to the Redis URL named in tokens, e.g. redis://streams:6379/0 (or redis-cluster://streams:7000), or set AUTH_REDIS_TARGETS to the instances streams are spread over',
        });
      } else if (e.AUTH_REDIS_URL !== undefined && e.AUTH_REDIS_TARGETS.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_REDIS_TARGETS'],
          message: 'conflicts with AUTH_REDIS_URL; set AUTH_REDIS_URL for one Redis or AUTH_REDIS_TARGETS for several, not both',
        });
      }
      const normalized = e.AUTH_REDIS_TARGETS.map((item) => normalizeRedisTarget(item) ?? item);
      const repeated = normalized.find((target, i) => normalized.indexOf(target) !== i);
      if (repeated !== undefined) {
        // Placement scores each listed target: a repeat would be one instance counted twice.
        ctx.addIssue({ code: 'custom', path: ['AUTH_REDIS_TARGETS'], message: `lists ${repeated} twice; list each instance once` });
      }
    },
    whenValid('AUTH_REDIS_URL', 'AUTH_REDIS_TARGETS'),
  )
  .superRefine(
    (e, ctx) => {
      const problem = jetStreamDemandTargetProblem({
        targets: e.AUTH_REDIS_URL === undefined ? [] : [normalizeStreamTarget(e.AUTH_REDIS_URL.trim()) ?? e.AUTH_REDIS_URL],
        demandPrefixes: e.AUTH_DEMAND_PREFIXES,
        demandTarget: e.AUTH_JETSTREAM_DEMAND_TARGET,
      });
      if (problem !== null) ctx.addIssue({ code: 'custom', path: ['AUTH_JETSTREAM_DEMAND_TARGET'], message: problem });
    },
    whenValid('AUTH_REDIS_URL', 'AUTH_DEMAND_PREFIXES', 'AUTH_JETSTREAM_DEMAND_TARGET'),
  )
  .superRefine(
    (e, ctx) => {
      if (e.AUTH_OPERATOR_CREDENTIAL_SHA256 !== undefined && e.AUTH_OPS_REDIS_URL === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_OPERATOR_CREDENTIAL_SHA256'],
          message:
            'needs AUTH_OPS_REDIS_URL: ops.token opens the operations stream on that Redis; set AUTH_OPS_REDIS_URL, or unset this to turn ops.token off',
        });
      }
    },
    whenValid('AUTH_OPERATOR_CREDENTIAL_SHA256', 'AUTH_OPS_REDIS_URL'),
  )
  .transform((e): AuthConfig => ({
    host: e.AUTH_HOST,
    port: e.AUTH_PORT,
    signingKeys:
      e.AUTH_SIGNING_KEYS !== undefined
        ? { kind: 'inline', json: e.AUTH_SIGNING_KEYS }
        : e.AUTH_SIGNING_KEYS_FILE !== undefined
          ? { kind: 'file', path: e.AUTH_SIGNING_KEYS_FILE, pollMs: e.AUTH_SIGNING_KEYS_POLL_MS }
          : { kind: 'generate' },
    issuer: e.AUTH_ISSUER,
    audience: e.AUTH_AUDIENCE,
    tokenTtlSeconds: e.AUTH_TOKEN_TTL_SECONDS,
    redisTargets: (e.AUTH_REDIS_URL === undefined ? e.AUTH_REDIS_TARGETS : [e.AUTH_REDIS_URL]).map(
      (raw) => normalizeStreamTarget(raw.trim()) ?? raw,
    ),
    demandPrefixes: e.AUTH_DEMAND_PREFIXES,
    demandTtlMs: e.AUTH_DEMAND_TTL_MS,
    jetStreamDemandTarget: resolveJetStreamDemandTarget(e.AUTH_JETSTREAM_DEMAND_TARGET),
    demoRouter: e.AUTH_DEMO_ROUTER,
    cors:
      e.AUTH_CORS_ORIGINS.length === 0
        ? null
        : { origins: e.AUTH_CORS_ORIGINS, credentials: e.AUTH_CORS_CREDENTIALS, maxAgeSeconds: e.AUTH_CORS_MAX_AGE_SECONDS },
    exposeStackTraces: e.NODE_ENV === 'development',
    logLevel: e.LOG_LEVEL,
    podName: e.AUTH_POD_NAME,
    ops:
      e.AUTH_OPS_REDIS_URL === undefined
        ? null
        : {
            redisUrl: e.AUTH_OPS_REDIS_URL,
            target: splitRedisUrl(e.AUTH_OPS_REDIS_URL)?.target ?? e.AUTH_OPS_REDIS_URL,
            stream: e.AUTH_OPS_STREAM,
          },
    operatorCredentialSha256: e.AUTH_OPERATOR_CREDENTIAL_SHA256?.trim().toLowerCase() ?? null,
  }));

/** Parses the process environment once, at boot, reporting every problem. Pure: reads no files (see loadSigningKeys). */
export function parseAuthConfig(env: Env): ConfigResult<AuthConfig> {
  return parseEnv(authConfigSchema, env, { app: 'auth', secret: ['AUTH_SIGNING_KEYS', 'AUTH_OPERATOR_CREDENTIAL_SHA256'] });
}
