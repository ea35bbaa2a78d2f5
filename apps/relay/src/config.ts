import { hostname } from 'node:os';
import { z } from 'zod';
import { normalizeRedisTarget, tokenAlgorithmSchema } from '@streamgate/protocol';

const int = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const bool = (fallback: boolean) =>
  z.enum(['true', 'false', '1', '0']).default(fallback ? 'true' : 'false').transform((v) => v === 'true' || v === '1');

const redisList = z
  .string()
  .min(1)
  .transform((raw, ctx) => {
    const out = new Set<string>();
    for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
      const normalized = normalizeRedisTarget(part);
      if (normalized === null) {
        ctx.addIssue({ code: 'custom', message: `"${part}" is not a redis:// URL without credentials` });
        return z.NEVER;
      }
      out.add(normalized);
    }
    return out;
  });

/** Default slack between the end of the drain window and the hard deadline. */
export const DRAIN_DEADLINE_MARGIN_MS = 60_000;

/** Every variable the relay reads, parsed once at boot. */
export const relayConfigSchema = z
  .object({
    RELAY_HOST: z.string().default('0.0.0.0'),
    RELAY_PORT: int(8081, 0, 65535),
    RELAY_NODE_ID: z.string().min(1).default(hostname()),
    RELAY_JWKS_URL: z.url().optional(),
    RELAY_JWKS_FILE: z.string().min(1).optional(),
    RELAY_JWKS_REFRESH_SECONDS: int(300, 10, 86_400),
    RELAY_TOKEN_ALGORITHMS: z
      .string()
      .default('ES256,EdDSA')
      .transform((raw) => raw.split(',').map((a) => a.trim()))
      .pipe(z.array(tokenAlgorithmSchema).min(1)),
    RELAY_TOKEN_AUDIENCE: z.string().min(1),
    RELAY_TOKEN_ISSUER: z.string().min(1),
    RELAY_CLOCK_SKEW_SECONDS: int(30, 0, 300),
    RELAY_REDIS_ALLOWLIST: redisList,
    RELAY_REDIS_USERNAME: z.string().min(1).optional(),
    RELAY_REDIS_PASSWORD: z.string().min(1).optional(),
    RELAY_MAX_FRAME_BYTES: int(16 * 1024, 512, 1024 * 1024),
    RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET: int(100, 1, 10_000),
    RELAY_MAX_BACKPRESSURE_BYTES: int(1024 * 1024, 16 * 1024, 256 * 1024 * 1024),
    RELAY_MAX_PENDING_CATCHUP_BYTES: int(256 * 1024, 4 * 1024, 256 * 1024 * 1024),
    RELAY_SLOW_CONSUMER_CHECK_MS: int(100, 10, 10_000),
    RELAY_MAX_CONNECTIONS: int(50_000, 1, 10_000_000),
    RELAY_MAX_CONNECTIONS_PER_SECOND: int(1_000, 1, 1_000_000),
    RELAY_CATCHUP_PAGE_SIZE: int(500, 1, 10_000),
    RELAY_XREAD_BLOCK_MS: int(5_000, 10, 60_000),
    RELAY_XREAD_COUNT: int(1_000, 1, 100_000),
    RELAY_MAX_STREAMS_PER_READER: int(1_000, 1, 100_000),
    RELAY_STREAM_LINGER_MS: int(5_000, 0, 600_000),
    RELAY_REFRESH_LEAD_SECONDS: int(30, 1, 3_600),
    RELAY_IDLE_TIMEOUT_SECONDS: int(60, 8, 960),
    RELAY_ALLOW_UWS_FALLBACK: bool(false),
    // Drain on SIGTERM (Drainer.ts): reconnects spread uniformly over the window, a second signal
    // shrinks what is left to the fast window, the deadline ends the process whatever remains.
    RELAY_DRAIN_WINDOW_MS: int(900_000, 0, 86_400_000),
    RELAY_DRAIN_FAST_WINDOW_MS: int(10_000, 0, 86_400_000),
    RELAY_DRAIN_DEADLINE_MS: z.coerce.number().int().min(0).max(86_400_000).optional(),
    // Ingest demand: streams under these prefixes are heartbeated while they have subscribers.
    RELAY_DEMAND_PREFIXES: z
      .string()
      .default('')
      .transform((raw) => raw.split(',').map((p) => p.trim()).filter(Boolean)),
    RELAY_DEMAND_INTERVAL_MS: int(5_000, 100, 600_000),
    RELAY_DEMAND_TTL_MS: int(15_000, 500, 3_600_000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    if (env.RELAY_MAX_PENDING_CATCHUP_BYTES > env.RELAY_MAX_BACKPRESSURE_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['RELAY_MAX_PENDING_CATCHUP_BYTES'],
        message: `must not exceed RELAY_MAX_BACKPRESSURE_BYTES (${env.RELAY_MAX_BACKPRESSURE_BYTES}): catch-up pauses below the cut, not above it`,
      });
    }
    if ((env.RELAY_JWKS_URL === undefined) === (env.RELAY_JWKS_FILE === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['RELAY_JWKS_URL'],
        message: 'set exactly one of RELAY_JWKS_URL (the auth service JWKS, e.g. http://auth:8080/.well-known/jwks.json) or RELAY_JWKS_FILE',
      });
    }
    if (env.RELAY_DRAIN_DEADLINE_MS !== undefined && env.RELAY_DRAIN_DEADLINE_MS < env.RELAY_DRAIN_WINDOW_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['RELAY_DRAIN_DEADLINE_MS'],
        message: `must be at least RELAY_DRAIN_WINDOW_MS (${env.RELAY_DRAIN_WINDOW_MS}), or the clients drawn late in the window would all reconnect at once at the deadline; leave it unset for window + 60000`,
      });
    }
  })
  .transform((env) => ({ ...env, RELAY_DRAIN_DEADLINE_MS: env.RELAY_DRAIN_DEADLINE_MS ?? env.RELAY_DRAIN_WINDOW_MS + DRAIN_DEADLINE_MARGIN_MS }));

export type RelayConfig = z.output<typeof relayConfigSchema>;

const hints: Record<string, string> = {
  RELAY_TOKEN_AUDIENCE: 'the `aud` the auth service puts in tokens (AUTH_AUDIENCE)',
  RELAY_TOKEN_ISSUER: 'the `iss` the auth service puts in tokens (AUTH_ISSUER)',
  RELAY_REDIS_ALLOWLIST: 'comma-separated redis:// URLs that tokens may name, e.g. redis://redis:6379/0',
  RELAY_TOKEN_ALGORITHMS: 'comma-separated, from ES256, EdDSA',
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment; the error names each bad variable and how to fix it. */
export function parseRelayConfig(env: Record<string, string | undefined>): RelayConfig {
  const result = relayConfigSchema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? 'environment');
    const hint = hints[name];
    return `  ${name}: ${issue.message}${hint === undefined ? '' : ` — expected ${hint}`}`;
  });
  throw new ConfigError(`invalid relay configuration:\n${lines.join("\n")}`);
}
