/**
 * How `RelayClient` spaces its retries (reconnects, token and subscribe retries). The delay itself
 * is `backoffDelay` from `@streamgate/protocol`, the one full-jitter backoff of the tree.
 */
export interface BackoffOptions {
  /** Ceiling of the first retry's delay. */
  baseMs?: number;
  /** Largest delay ever slept, whatever the attempt. */
  maxMs?: number;
}

export interface ResolvedBackoff {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: ResolvedBackoff = { baseMs: 250, maxMs: 30_000 };

/** Fills in the defaults and refuses bounds no backoff can honour, at construction rather than at the first retry. */
export function resolveBackoff(options: BackoffOptions | undefined): ResolvedBackoff {
  const baseMs = options?.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const maxMs = options?.maxMs ?? DEFAULT_BACKOFF.maxMs;
  if (!(baseMs > 0) || !(maxMs >= baseMs)) {
    throw new RangeError(`backoff needs 0 < baseMs <= maxMs (got baseMs=${baseMs}, maxMs=${maxMs})`);
  }
  return { baseMs, maxMs };
}
