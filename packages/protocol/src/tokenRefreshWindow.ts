/**
 * When a token should be renewed. The relay uses it to time its `refresh_token` notice, the client
 * to time its own refresh, so both follow one documented rule (docs/protocol.md §7).
 *
 * A fixed lead before `exp` would make every token minted in one burst (a wave of sign-ins, a
 * backend deploy that re-mints) come back to the authorization backend in the same second, every
 * lifetime. So the moment is drawn uniformly over a window one third of the token's lifetime long
 * that closes `leadSeconds` before `exp` (the lead capped at half the lifetime, so short tokens
 * still get a window): tokens minted together ask apart, and none asks later than the lead.
 */
export interface TokenRefreshWindow {
  /** Earliest moment to renew, epoch milliseconds. */
  readonly startMs: number;
  /** Latest moment to renew, epoch milliseconds: `exp` minus the (capped) lead. */
  readonly endMs: number;
}

export interface TokenLifetime {
  /** The token's `iat` claim, epoch seconds. */
  readonly iatSeconds: number;
  /** The token's `exp` claim, epoch seconds. */
  readonly expSeconds: number;
  /** How long before `exp` the renewal must have been asked for at the latest. */
  readonly leadSeconds: number;
}

export function tokenRefreshWindow({ iatSeconds, expSeconds, leadSeconds }: TokenLifetime): TokenRefreshWindow {
  const lifetimeMs = Math.max(0, (expSeconds - iatSeconds) * 1000);
  const endMs = expSeconds * 1000 - Math.min(Math.max(0, leadSeconds) * 1000, lifetimeMs / 2);
  const startMs = Math.max(iatSeconds * 1000, endMs - lifetimeMs / 3);
  return { startMs, endMs };
}

/**
 * Milliseconds from `nowMs` until the renewal: uniform over what is left of the window (the whole
 * window for a fresh token; from now to its end for one received late in its life; 0 once the window
 * has closed).
 */
export function tokenRefreshDelayMs(lifetime: TokenLifetime, nowMs: number, random: () => number = Math.random): number {
  const { startMs, endMs } = tokenRefreshWindow(lifetime);
  const from = Math.max(startMs, nowMs);
  if (from >= endMs) return Math.max(0, endMs - nowMs);
  return from + random() * (endMs - from) - nowMs;
}
