export interface BackoffOptions {
  /** Ceiling of the first retry's delay. */
  baseMs?: number;
  /** Largest delay ever slept, whatever the attempt. */
  maxMs?: number;
}

export interface ResolvedBackoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: ResolvedBackoff = { baseMs: 250, maxMs: 30_000 };

export function resolveBackoff(options: BackoffOptions | undefined): ResolvedBackoff {
  const baseMs = options?.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const maxMs = options?.maxMs ?? DEFAULT_BACKOFF.maxMs;
  if (!(baseMs > 0) || !(maxMs >= baseMs)) {
    throw new RangeError(`backoff needs 0 < baseMs <= maxMs (got baseMs=${baseMs}, maxMs=${maxMs})`);
  }
  return { baseMs, maxMs };
}

/** Upper bound of the delay before retry number `attempt` (0-based). */
export function backoffCeiling(attempt: number, backoff: ResolvedBackoff): number {
  // 2^64 already dwarfs any maxMs; capping the exponent keeps the product finite.
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 64);
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** exponent);
}

/**
 * Full-jitter exponential backoff: uniform in [0, min(maxMs, baseMs * 2^attempt)). Full jitter
 * rather than equal jitter because spreading a reconnect herd matters more here than the
 * latency of any single client.
 */
export function fullJitterDelay(
  attempt: number,
  backoff: ResolvedBackoff,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * backoffCeiling(attempt, backoff));
}
