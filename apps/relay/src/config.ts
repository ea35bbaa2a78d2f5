import { hostname } from 'node:os';
import { z } from 'zod';
import { envEnum, envInt, envList, envText, parseEnv, urlCheck, whenValid } from '@streamgate/boot';
import type { ConfigResult, Env } from '@streamgate/boot';
import { OPS_STREAM_DEFAULT, podNameCheck } from '@streamgate/ops';
import {
  MAX_ENTRY_DATA_BYTES,
  normalizeJetStreamTarget,
  normalizeRedisTarget,
  parseRedisTarget,
  redisTargetItemProblem,
  splitRedisUrl,
  streamNameSchema,
  tokenAlgorithmSchema,
} from '@streamgate/protocol';
import { jetStreamDemandTargetCheck, jetStreamDemandTargetProblem, resolveJetStreamDemandTarget } from './demand/jetStreamDemandTarget.js';

const int = (fallback: number, min: number, max: number, meaning?: string) => envInt({ fallback, min, max, meaning });

const redisTargetProblem = (part: string): string | null =>
  redisTargetItemProblem(
    part,
    'list redis://host:port/db instances and redis-cluster://seed:port clusters (credentials go in RELAY_REDIS_USERNAME / RELAY_REDIS_PASSWORD)',
  );
const redisList = envList({
  required: 'set it to the comma-separated redis:// URLs tokens may name, e.g. redis://redis:6379/0',
  each: redisTargetProblem,
  nonEmpty: true,
}).transform((parts) => new Set(parts.map((part) => normalizeRedisTarget(part) ?? part)));

/**
 * JetStream targets tokens may name. Separated by spaces, not commas: one target lists its
 * cluster's seeds with commas (`nats://n1:4222,n2:4222/STREAMGATE`).
 */
const jetStreamList = envText({
  optional: 'for no JetStream target',
  check: (text) => {
    const items = text.split(/\s+/).filter((item) => item !== '');
    if (items.length === 0) return 'holds no target; list nats://seed:port,seed:port/STREAM targets separated by spaces, or leave it unset';
    const bad = items.filter((item) => normalizeJetStreamTarget(item) === null);
    return bad.length === 0
      ? null
      : `${bad.map((item) => `"${item.replace(/\/\/[^@/]*@/, '//<credentials>@')}"`).join(', ')} is not a JetStream target; list nats:// or tls:// URLs with comma-separated seeds, an optional /STREAM, and no credentials (they go in RELAY_NATS_USERNAME / RELAY_NATS_PASSWORD), separated by spaces`;
  },
}).transform((text) =>
  text === undefined
    ? new Set<string>()
    : new Set(
        text
          .split(/\s+/)
          .filter((item) => item !== '')
          .map((item) => normalizeJetStreamTarget(item) ?? item),
      ),
);

// The relay's own connection to the operations stream's Redis: credentials may be in the URL.
const opsRedisUrlProblem = (raw: string): string | null =>
  splitRedisUrl(raw) === null
    ? 'must be a redis:// or rediss:// URL with host, optional port and db, or a redis-cluster:// or rediss-cluster:// URL with host and optional port; set it to one, e.g. redis://redis:6379/0'
    : null;

const MIN_ENTRY_BYTES = 1024;

/** An event frame's bytes beyond its `data` value: op, a stream name of at most 200, an id (rounded up). */
export const ENTRY_FRAME_OVERHEAD_BYTES = 1024;

/**
 * The largest `data` value a catch-up can send without passing the send-buffer cut: it sends a
 * frame while the socket holds at most the pending limit.
 */
export function entryFrameRoom(maxBackpressureBytes: number, maxPendingCatchUpBytes: number): number {
  return maxBackpressureBytes - maxPendingCatchUpBytes - ENTRY_FRAME_OVERHEAD_BYTES;
}

/** Default slack between the end of the drain window and the hard deadline. */
export const DRAIN_DEADLINE_MARGIN_MS = 60_000;

/** Every variable the relay reads, parsed once at boot. */
export const relayConfigSchema = z
  .object({
    RELAY_HOST: envText({ fallback: '0.0.0.0' }),
    RELAY_PORT: envInt({ fallback: 8081, min: 0, max: 65535, meaning: '0 = any free port', fix: 'set it to a port number' }),
    RELAY_NODE_ID: envText({ fallback: hostname(), fallbackText: 'the hostname', check: podNameCheck }),
    RELAY_JWKS_URL: envText({
      optional: 'and set RELAY_JWKS_FILE instead',
      check: urlCheck(['http', 'https'], 'http://auth:8080/.well-known/jwks.json', { noCredentials: true }),
    }),
    RELAY_JWKS_FILE: envText({ optional: 'and set RELAY_JWKS_URL instead' }),
    RELAY_JWKS_REFRESH_SECONDS: int(300, 10, 86_400),
    // RELAY_JWKS_FILE is watched, and re-read at least this often (docs/protocol.md §10, "Key rotation").
    RELAY_JWKS_FILE_POLL_MS: int(2_000, 100, 600_000),
    RELAY_TOKEN_ALGORITHMS: envList({
      fallback: ['ES256', 'EdDSA'],
      nonEmpty: true,
      each: (a) =>
        tokenAlgorithmSchema.safeParse(a).success ? null : `"${a}" is not an accepted algorithm; list algorithms from ES256, EdDSA`,
    }).pipe(z.array(tokenAlgorithmSchema)),
    RELAY_TOKEN_AUDIENCE: envText({ required: 'set it to the `aud` the auth service puts in tokens (its AUTH_AUDIENCE)' }),
    RELAY_TOKEN_ISSUER: envText({ required: 'set it to the `iss` the auth service puts in tokens (its AUTH_ISSUER)' }),
    RELAY_CLOCK_SKEW_SECONDS: int(30, 0, 300, '0 = no tolerance'),
    RELAY_REDIS_ALLOWLIST: redisList,
    // One target down is contained (docs/protocol.md §8, "One Redis target down"): after this long
    // unreachable its subscriptions end with a retryable stream_unavailable.
    RELAY_REDIS_DOWN_AFTER_MS: int(3_000, 0, 600_000, '0 = at the first failed health check'),
    RELAY_REDIS_USERNAME: envText({ optional: 'for no username' }),
    RELAY_REDIS_PASSWORD: envText({ optional: 'for no password' }),
    // NATS JetStream targets (docs/protocol.md §17), read beside the Redis ones.
    RELAY_JETSTREAM_ALLOWLIST: jetStreamList,
    RELAY_NATS_USERNAME: envText({ optional: 'for no username' }),
    RELAY_NATS_PASSWORD: envText({ optional: 'for no password' }),
    RELAY_MAX_FRAME_BYTES: int(16 * 1024, 512, 1024 * 1024),
    RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET: int(100, 1, 10_000),
    RELAY_MAX_BACKPRESSURE_BYTES: int(1024 * 1024, 16 * 1024, 256 * 1024 * 1024),
    RELAY_MAX_PENDING_CATCHUP_BYTES: int(256 * 1024, 4 * 1024, 256 * 1024 * 1024),
    // Larger entries are sent as `malformed` (docs/protocol.md §11, "Entry size"); the default
    // and the bound keep a catch-up below the slow-consumer cut (entryFrameRoom).
    RELAY_MAX_ENTRY_BYTES: envInt({
      optional: `for ${MAX_ENTRY_DATA_BYTES}, or less when the send-buffer limits leave less room`,
      min: MIN_ENTRY_BYTES,
      max: 256 * 1024 * 1024,
    }),
    RELAY_SLOW_CONSUMER_CHECK_MS: int(100, 10, 10_000),
    RELAY_MAX_CONNECTIONS: int(50_000, 1, 10_000_000),
    RELAY_MAX_CONNECTIONS_PER_SECOND: int(1_000, 1, 1_000_000),
    RELAY_CATCHUP_PAGE_SIZE: int(500, 1, 10_000),
    RELAY_XREAD_BLOCK_MS: int(5_000, 10, 60_000),
    RELAY_XREAD_COUNT: int(1_000, 1, 100_000),
    RELAY_MAX_STREAMS_PER_READER: int(1_000, 1, 100_000),
    // Live reads (docs/protocol.md §11): notification-driven where the server notifies for stream keys.
    RELAY_READ_MODE: envEnum(['auto', 'notify', 'batch'], { fallback: 'auto' }),
    RELAY_READ_MODE_CHECK_MS: int(5_000, 100, 600_000),
    RELAY_NOTIFY_SWEEP_MS: int(60_000, 100, 600_000),
    RELAY_STREAM_LINGER_MS: int(5_000, 0, 600_000, '0 = stop reading at once'),
    RELAY_REFRESH_LEAD_SECONDS: int(30, 1, 3_600),
    RELAY_IDLE_TIMEOUT_SECONDS: int(60, 8, 960),
    // Protocol-level liveness (docs/protocol.md §8): a `ping` per socket per interval; a socket that
    // sends nothing for a whole interval after one is closed with 4006.
    RELAY_PING_INTERVAL_MS: int(25_000, 100, 600_000),
    // Drain on SIGTERM (Drainer.ts): reconnects spread uniformly over the window, a second signal
    // shrinks what is left to the fast window, the deadline ends the process whatever remains.
    RELAY_DRAIN_WINDOW_MS: int(900_000, 0, 86_400_000, '0 = all at once'),
    RELAY_DRAIN_FAST_WINDOW_MS: int(10_000, 0, 86_400_000, '0 = all at once'),
    RELAY_DRAIN_DEADLINE_MS: envInt({ optional: 'for RELAY_DRAIN_WINDOW_MS + 60000', min: 0, max: 86_400_000 }),
    // Ingest demand: streams under these prefixes are heartbeated while they have subscribers.
    RELAY_DEMAND_PREFIXES: envList({ fallback: [] }),
    RELAY_DEMAND_INTERVAL_MS: int(5_000, 100, 600_000),
    RELAY_DEMAND_TTL_MS: int(15_000, 500, 3_600_000),
    // A JetStream target has no Redis of its own: its streams' demand goes to this one (jetStreamDemandTarget.ts).
    RELAY_JETSTREAM_DEMAND_TARGET: envText({
      optional: 'for the RELAY_REDIS_ALLOWLIST target when it lists only one',
      check: jetStreamDemandTargetCheck,
    }),
    // Operations snapshots (docs/protocol.md, "Operations stream"), once a second; RELAY_NODE_ID names the pod.
    RELAY_OPS_REDIS_URL: envText({ optional: 'to publish no operations snapshots', check: opsRedisUrlProblem }),
    RELAY_OPS_STREAM: envText({
      fallback: OPS_STREAM_DEFAULT,
      check: (raw) =>
        streamNameSchema.safeParse(raw).success
          ? null
          : 'is not a stream name (letters, digits and _ . : { } - /, at most 200); set one, e.g. streamgate:ops',
    }),
    LOG_LEVEL: envEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { fallback: 'info' }),
  })
  .superRefine(
    (env, ctx) => {
      if (env.RELAY_MAX_PENDING_CATCHUP_BYTES > env.RELAY_MAX_BACKPRESSURE_BYTES) {
        ctx.addIssue({
          code: 'custom',
          path: ['RELAY_MAX_PENDING_CATCHUP_BYTES'],
          message: `must not exceed RELAY_MAX_BACKPRESSURE_BYTES (${env.RELAY_MAX_BACKPRESSURE_BYTES}): catch-up pauses below the cut, not above it; lower it or raise RELAY_MAX_BACKPRESSURE_BYTES`,
        });
      }
    },
    whenValid('RELAY_MAX_PENDING_CATCHUP_BYTES', 'RELAY_MAX_BACKPRESSURE_BYTES'),
  )
  .superRefine(
    (env, ctx) => {
      const room = entryFrameRoom(env.RELAY_MAX_BACKPRESSURE_BYTES, env.RELAY_MAX_PENDING_CATCHUP_BYTES);
      const asked = env.RELAY_MAX_ENTRY_BYTES ?? MIN_ENTRY_BYTES;
      if (asked > room) {
        ctx.addIssue({
          code: 'custom',
          path: [env.RELAY_MAX_ENTRY_BYTES === undefined ? 'RELAY_MAX_PENDING_CATCHUP_BYTES' : 'RELAY_MAX_ENTRY_BYTES'],
          message: `${env.RELAY_MAX_ENTRY_BYTES === undefined ? `leaves no RELAY_MAX_ENTRY_BYTES of at least ${MIN_ENTRY_BYTES} at or below` : 'is above'} RELAY_MAX_BACKPRESSURE_BYTES − RELAY_MAX_PENDING_CATCHUP_BYTES − ${ENTRY_FRAME_OVERHEAD_BYTES} (${room}): a catch-up sends one more frame while the socket holds up to the pending limit, and a frame that takes it past the send-buffer cut would have the client cut and resumed onto the same entry for ever; lower RELAY_MAX_ENTRY_BYTES or RELAY_MAX_PENDING_CATCHUP_BYTES, or raise RELAY_MAX_BACKPRESSURE_BYTES`,
        });
      }
    },
    whenValid('RELAY_MAX_ENTRY_BYTES', 'RELAY_MAX_BACKPRESSURE_BYTES', 'RELAY_MAX_PENDING_CATCHUP_BYTES'),
  )
  .superRefine(
    (env, ctx) => {
      const clusters = [...env.RELAY_REDIS_ALLOWLIST].filter((target) => parseRedisTarget(target)?.kind === 'cluster');
      if (env.RELAY_READ_MODE === 'batch' && clusters.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['RELAY_READ_MODE'],
          message: `is batch, but RELAY_REDIS_ALLOWLIST names the Redis Cluster ${clusters.join(', ')}, which is read notification-driven only (a batched blocking XREAD cannot name keys of several slots); set RELAY_READ_MODE=auto or notify, or take the cluster out of RELAY_REDIS_ALLOWLIST`,
        });
      }
    },
    whenValid('RELAY_READ_MODE', 'RELAY_REDIS_ALLOWLIST'),
  )
  .superRefine(
    (env, ctx) => {
      if ((env.RELAY_JWKS_URL === undefined) === (env.RELAY_JWKS_FILE === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['RELAY_JWKS_URL'],
          message: `${env.RELAY_JWKS_URL === undefined ? 'and RELAY_JWKS_FILE are both unset' : 'and RELAY_JWKS_FILE are both set'}; set exactly one: RELAY_JWKS_URL to the auth service's JWKS (e.g. http://auth:8080/.well-known/jwks.json) or RELAY_JWKS_FILE to a JWKS file`,
        });
      }
    },
    whenValid('RELAY_JWKS_URL', 'RELAY_JWKS_FILE'),
  )
  .superRefine(
    (env, ctx) => {
      if (env.RELAY_DRAIN_DEADLINE_MS !== undefined && env.RELAY_DRAIN_DEADLINE_MS < env.RELAY_DRAIN_WINDOW_MS) {
        ctx.addIssue({
          code: 'custom',
          path: ['RELAY_DRAIN_DEADLINE_MS'],
          message: `must be at least RELAY_DRAIN_WINDOW_MS (${env.RELAY_DRAIN_WINDOW_MS}), or the clients drawn late in the window would all reconnect at once at the deadline; raise it or leave it unset for window + 60000`,
        });
      }
    },
    whenValid('RELAY_DRAIN_DEADLINE_MS', 'RELAY_DRAIN_WINDOW_MS'),
  )
  .superRefine(
    (env, ctx) => {
      const problem = jetStreamDemandTargetProblem(env);
      if (problem !== null) ctx.addIssue({ code: 'custom', path: ['RELAY_JETSTREAM_DEMAND_TARGET'], message: problem });
    },
    whenValid('RELAY_JETSTREAM_DEMAND_TARGET', 'RELAY_REDIS_ALLOWLIST', 'RELAY_JETSTREAM_ALLOWLIST', 'RELAY_DEMAND_PREFIXES'),
  )
  .transform((env) => ({
    ...env,
    // Normalized, or the only Redis target; undefined when there is none to default to.
    RELAY_JETSTREAM_DEMAND_TARGET: resolveJetStreamDemandTarget(env),
    RELAY_DRAIN_DEADLINE_MS: env.RELAY_DRAIN_DEADLINE_MS ?? env.RELAY_DRAIN_WINDOW_MS + DRAIN_DEADLINE_MARGIN_MS,
    RELAY_MAX_ENTRY_BYTES:
      env.RELAY_MAX_ENTRY_BYTES ??
      Math.min(MAX_ENTRY_DATA_BYTES, entryFrameRoom(env.RELAY_MAX_BACKPRESSURE_BYTES, env.RELAY_MAX_PENDING_CATCHUP_BYTES)),
  }));

export type RelayConfig = z.output<typeof relayConfigSchema>;

/** Parses the environment once, at boot; every bad variable is reported, each with its fix. */
export function parseRelayConfig(env: Env): ConfigResult<RelayConfig> {
  return parseEnv(relayConfigSchema, env, { app: 'relay', secret: ['RELAY_REDIS_PASSWORD', 'RELAY_NATS_PASSWORD'] });
}
