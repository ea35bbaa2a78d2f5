import { normalizeRedisTarget, redisTargetItemProblem } from '@streamgate/protocol';

/** The relay variables that decide where demand for streams on JetStream targets is recorded. */
export interface JetStreamDemandEnv {
  readonly RELAY_JETSTREAM_DEMAND_TARGET: string | undefined;
  /** Normalized. */
  readonly RELAY_REDIS_ALLOWLIST: ReadonlySet<string>;
  readonly RELAY_JETSTREAM_ALLOWLIST: ReadonlySet<string>;
  readonly RELAY_DEMAND_PREFIXES: readonly string[];
}

const FIX =
  "set it to the RELAY_REDIS_ALLOWLIST target your ingest keeps its leases and demand in (its INGEST_REDIS_URL's target, without credentials), e.g. redis://redis:6379/0";

/** The check of the value alone: a Redis target without credentials. */
export function jetStreamDemandTargetCheck(raw: string): string | null {
  return redisTargetItemProblem(raw.trim(), FIX);
}

/**
 * A JetStream target has no Redis of its own for ingest's demand set, so its streams' demand
 * goes to one Redis the operator names. Unset, the relay's only Redis target is the obvious one:
 * it is the only Redis the relay could name. With several there is no right guess, and a wrong
 * one is silent (ingest never starts those streams), so it is then required.
 * Null when the combination is fine.
 */
export function jetStreamDemandTargetProblem(env: JetStreamDemandEnv): string | null {
  const redis = [...env.RELAY_REDIS_ALLOWLIST];
  if (env.RELAY_JETSTREAM_DEMAND_TARGET === undefined) {
    if (env.RELAY_DEMAND_PREFIXES.length === 0 || env.RELAY_JETSTREAM_ALLOWLIST.size === 0 || redis.length < 2) return null;
    return `is required when RELAY_DEMAND_PREFIXES and RELAY_JETSTREAM_ALLOWLIST are both set and RELAY_REDIS_ALLOWLIST lists several targets: demand for streams on JetStream targets is recorded in one Redis, the one ingest reads it from; set it to one of ${redis.join(', ')}`;
  }
  const target = normalizeRedisTarget(env.RELAY_JETSTREAM_DEMAND_TARGET.trim());
  if (target === null || env.RELAY_REDIS_ALLOWLIST.has(target)) return null;
  return `is ${target}, which RELAY_REDIS_ALLOWLIST does not list: the relay records demand over its connection to an allowlisted Redis; add it to RELAY_REDIS_ALLOWLIST or set this to one of ${redis.join(', ')}`;
}

/** The normalized Redis target for JetStream streams' demand, or undefined when there is none to use. */
export function resolveJetStreamDemandTarget(
  env: Pick<JetStreamDemandEnv, 'RELAY_JETSTREAM_DEMAND_TARGET' | 'RELAY_REDIS_ALLOWLIST'>,
): string | undefined {
  if (env.RELAY_JETSTREAM_DEMAND_TARGET !== undefined) return normalizeRedisTarget(env.RELAY_JETSTREAM_DEMAND_TARGET.trim()) ?? undefined;
  const redis = [...env.RELAY_REDIS_ALLOWLIST];
  return redis.length === 1 ? redis[0] : undefined;
}
