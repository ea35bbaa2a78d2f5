import { tokenRefreshDelayMs } from '@streamgate/protocol';
import type { Clock } from './Clock.js';

export interface TokenTimersOptions {
  readonly clock: Clock;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  readonly refreshLeadSeconds: number;
  readonly clockSkewSeconds: number;
}

/**
 * The two moments of one subscription's token: when to ask for a new one and when it has run
 * out. A fixed lead before `exp` would make every token minted in one burst ask the issuer again
 * in the same second, every lifetime; so the ask is drawn uniformly over the token's refresh
 * window, which closes max(refresh lead, clock skew) before `exp` so that no ask comes after the
 * point where a client whose clock is behind may already see the token as expired. The token runs
 * out at `exp` plus the skew: the instant this relay would itself start refusing it.
 */
export class TokenTimers {
  private cancels: Array<() => void> = [];

  constructor(private readonly options: TokenTimersOptions) {}

  /** Replaces any earlier schedule with the one for this token. */
  schedule(claims: { iat: number; exp: number }, onRefreshDue: () => void, onExpired: () => void): void {
    this.cancel();
    const o = this.options;
    const now = o.clock.now();
    const leadSeconds = Math.max(o.refreshLeadSeconds, o.clockSkewSeconds);
    const refreshAt = now + tokenRefreshDelayMs({ iatSeconds: claims.iat, expSeconds: claims.exp, leadSeconds }, now, o.random);
    this.cancels = [this.at(refreshAt, onRefreshDue), this.at((claims.exp + o.clockSkewSeconds) * 1000, onExpired)];
  }

  cancel(): void {
    for (const cancel of this.cancels) cancel();
    this.cancels = [];
  }

  /** Runs `fn` once the clock reaches `atMs`. */
  private at(atMs: number, fn: () => void): () => void {
    let cancel: () => void = () => undefined;
    const arm = (): void => {
      const delay = atMs - this.options.clock.now();
      // Timers fire at once for delays past 2^31-1 ms (~24.8 days); a token from an issuer with
      // long lifetimes must not be expired on arrival, so such waits are re-armed in steps.
      cancel = this.options.clock.after(Math.min(MAX_TIMER_MS, Math.max(0, delay)), () => (delay > MAX_TIMER_MS ? arm() : fn()));
    };
    arm();
    return () => cancel();
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;
