import { isJetStreamTarget, normalizeRedisTarget, redisTargetItemProblem } from '@streamgate/protocol';

const FIX =
  'set it to the Redis target your ingest keeps its leases and demand in (its INGEST_REDIS_URL without credentials), e.g. redis://redis:6379/0';

/** The check of AUTH_JETSTREAM_DEMAND_TARGET's value alone: a Redis target without credentials. */
export function jetStreamDemandTargetCheck(raw: string): string | null {
  return redisTargetItemProblem(raw.trim(), FIX);
}

/**
 * A JetStream target has no Redis of its own for ingest's demand set (docs/protocol.md §17), so
 * when tokens name one and minting registers demand, the operator must say which Redis gets it:
 * auth's targets hold no Redis to default to. Null when the combination is fine.
 */
export function jetStreamDemandTargetProblem(env: {
  readonly targets: readonly string[];
  readonly demandPrefixes: readonly string[];
  readonly demandTarget: string | undefined;
}): string | null {
  if (env.demandTarget !== undefined || env.demandPrefixes.length === 0) return null;
  const jetStream = env.targets.filter(isJetStreamTarget);
  if (jetStream.length === 0) return null;
  return `is required when AUTH_DEMAND_PREFIXES is set and tokens name the JetStream target ${jetStream.join(' ')}: a JetStream target has no Redis of its own for ingest's demand set; ${FIX}`;
}

/** The normalized target, or null when unset. */
export function resolveJetStreamDemandTarget(raw: string | undefined): string | null {
  return raw === undefined ? null : normalizeRedisTarget(raw.trim());
}
