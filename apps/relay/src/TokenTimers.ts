import { tokenRefreshDelayMs } from '@streamgate/protocol';
import type { Deadline, DeadlineOwner, DeadlineQueue } from './DeadlineQueue.js';

/** Shared by every subscription of a session (one object per socket, not per subscription). */
export interface TokenTimersOptions {
  readonly deadlines: DeadlineQueue;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  readonly refreshLeadSeconds: number;
  readonly clockSkewSeconds: number;
}

/** What a subscription's token timers tell its session, naming the subscription by its sid. */
export interface TokenEvents {
  /** Time to ask for a new token; `exp` is the expiry of the token in effect. */
  refreshDue(sid: string, exp: number): void;
  expired(sid: string): void;
}

const REFRESH = 0;
const EXPIRY = 1;

/**
 * The two moments of one subscription's token: when to ask for a new one and when it has run
 * out. A fixed lead before `exp` would make every token minted in one burst ask the issuer again
 * in the same second, every lifetime; so the ask is drawn uniformly over the token's refresh
 * window, which closes max(refresh lead, clock skew) before `exp` so that no ask comes after the
 * point where a client whose clock is behind may already see the token as expired. The token runs
 * out at `exp` plus the skew: the instant this relay would itself start refusing it.
 *
 * Both are entries on the pod's DeadlineQueue, and what they call is the session's one
 * TokenEvents: an idle subscription holds no timer and no closure of its own.
 */
export class TokenTimers implements DeadlineOwner {
  private refresh: Deadline | null = null;
  private expiry: Deadline | null = null;
  private exp = 0;

  constructor(
    private readonly options: TokenTimersOptions,
    private readonly sid: string,
    private readonly events: TokenEvents,
  ) {}

  /** Replaces any earlier schedule with the one for this token. */
  schedule(claims: { iat: number; exp: number }): void {
    this.cancel();
    const o = this.options;
    const now = o.deadlines.now;
    const leadSeconds = Math.max(o.refreshLeadSeconds, o.clockSkewSeconds);
    const refreshAt = now + tokenRefreshDelayMs({ iatSeconds: claims.iat, expSeconds: claims.exp, leadSeconds }, now, o.random);
    this.exp = claims.exp;
    this.refresh = o.deadlines.add(refreshAt, this, REFRESH);
    this.expiry = o.deadlines.add((claims.exp + o.clockSkewSeconds) * 1000, this, EXPIRY);
  }

  cancel(): void {
    const { deadlines } = this.options;
    if (this.refresh !== null) deadlines.cancel(this.refresh);
    if (this.expiry !== null) deadlines.cancel(this.expiry);
    this.refresh = null;
    this.expiry = null;
  }

  onDeadline(kind: number): void {
    if (kind === REFRESH) {
      this.refresh = null;
      this.events.refreshDue(this.sid, this.exp);
    } else {
      this.expiry = null;
      this.events.expired(this.sid);
    }
  }
}
