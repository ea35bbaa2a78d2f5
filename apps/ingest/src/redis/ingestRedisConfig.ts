import { normalizeRedisTarget, redisTargetItemProblem, splitRedisUrl } from '@streamgate/protocol';

/** Where this worker writes: the normalized targets (one, or the placement list) and the credentials for all of them. */
export interface IngestRedisConfig {
  readonly targets: readonly string[];
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Replicas that must acknowledge a lease grant, and how long to wait for them; undefined: no wait. */
  readonly leaseWait: { readonly count: number; readonly timeoutMs: number } | undefined;
}

export function ingestRedisUrlCheck(raw: string): string | null {
  return splitRedisUrl(raw) === null
    ? 'must be a redis:// or rediss:// URL (host, optional port and db) or a redis-cluster:// or rediss-cluster:// URL (one seed node: host and optional port), credentials in it percent-encoded; set it to one, e.g. redis://redis:6379/0 or redis-cluster://redis-0:6379'
    : null;
}

/**
 * One item of INGEST_REDIS_TARGETS, written as auth and the publisher list it (docs/protocol.md
 * §16): an instance or a cluster seed, without credentials.
 */
export function redisTargetItemCheck(item: string): string | null {
  return redisTargetItemProblem(
    item,
    'list the targets auth and the publisher list, e.g. redis://r0:6379/0,redis://r1:6379/0 (credentials go in INGEST_REDIS_USERNAME / INGEST_REDIS_PASSWORD)',
  );
}

/**
 * The targets and credentials from validated variables: INGEST_REDIS_URL (credentials in it win
 * over INGEST_REDIS_USERNAME / _PASSWORD) or INGEST_REDIS_TARGETS, each target normalized so it is
 * placed on exactly like the issuer and the publisher place it.
 */
export function ingestRedisConfig(env: {
  readonly INGEST_REDIS_URL: string | undefined;
  readonly INGEST_REDIS_TARGETS: readonly string[];
  readonly INGEST_REDIS_USERNAME: string | undefined;
  readonly INGEST_REDIS_PASSWORD: string | undefined;
  readonly INGEST_LEASE_WAIT_REPLICAS: number | undefined;
  readonly INGEST_LEASE_WAIT_TIMEOUT_MS: number;
}): IngestRedisConfig {
  const leaseWait =
    env.INGEST_LEASE_WAIT_REPLICAS === undefined
      ? undefined
      : { count: env.INGEST_LEASE_WAIT_REPLICAS, timeoutMs: env.INGEST_LEASE_WAIT_TIMEOUT_MS };
  const own = env.INGEST_REDIS_URL === undefined ? null : splitRedisUrl(env.INGEST_REDIS_URL);
  if (own !== null && (own.username !== undefined || own.password !== undefined)) {
    return { targets: [own.target], username: own.username, password: own.password, leaseWait };
  }
  const targets = own !== null ? [own.target] : env.INGEST_REDIS_TARGETS.map((t) => normalizeRedisTarget(t) ?? t);
  return { targets, username: env.INGEST_REDIS_USERNAME, password: env.INGEST_REDIS_PASSWORD, leaseWait };
}
