/**
 * - `up`: the target answers;
 * - `unhealthy`: it does not, for less than the bound: subscriptions are kept (a reconnect
 *   blip must not send every client of the target through a resubscribe and a catch-up), and
 *   new subscribes are still tried (a busy pod's late PING reply must not refuse clients);
 * - `down`: it has not answered for the bound: its subscriptions were ended, and new
 *   subscribes are refused at once until it answers.
 */
export type TargetState = 'up' | 'unhealthy' | 'down';

export interface TargetHealthWatchOptions {
  /** Whether the target answers now (StreamHub.healthy). */
  readonly healthy: () => boolean;
  /**
   * When it is first seen unhealthy, how long the target had already gone unanswered
   * (StreamHub.unansweredForMs): the bound counts from then, not from the sample. Unset: 0.
   */
  readonly unansweredForMs?: () => number;
  /** How long the target may go unanswered before it counts as down. 0: at the first check. */
  readonly downAfterMs: number;
  /** Milliseconds, monotonic. */
  readonly now: () => number;
  /** The target became down: end its subscriptions. */
  readonly onDown: (unhealthyForMs: number) => void;
  /** A down target answers again. */
  readonly onUp: (downForMs: number) => void;
  /**
   * Two samples further apart than this mean the pod itself was starved (its event loop blocked,
   * its CPU taken): a PING reply left unread then says nothing about the target, so the
   * unhealthy time restarts from this sample. Unset: every gap counts.
   */
  readonly starvedGapMs?: number;
}

/**
 * Turns one target's instantaneous health, sampled by `check()`, into its state. It holds no
 * timer: the relay samples every target on one interval, so a test drives it with its own clock.
 */
export class TargetHealthWatch {
  private unhealthySince: number | null = null;
  private downSince: number | null = null;
  private lastCheck: number | null = null;

  constructor(private readonly options: TargetHealthWatchOptions) {}

  get state(): TargetState {
    if (this.downSince !== null) return 'down';
    return this.unhealthySince === null ? 'up' : 'unhealthy';
  }

  /** Samples the target once; returns the state after the sample. */
  check(): TargetState {
    const now = this.options.now();
    const starved = this.lastCheck !== null && this.options.starvedGapMs !== undefined && now - this.lastCheck > this.options.starvedGapMs;
    this.lastCheck = now;
    if (this.options.healthy()) {
      const downSince = this.downSince;
      this.unhealthySince = null;
      this.downSince = null;
      if (downSince !== null) this.options.onUp(now - downSince);
      return 'up';
    }
    if (starved && this.downSince === null) this.unhealthySince = now;
    this.unhealthySince ??= now - (this.options.unansweredForMs?.() ?? 0);
    if (this.downSince === null && now - this.unhealthySince >= this.options.downAfterMs) {
      this.downSince = now;
      this.options.onDown(now - this.unhealthySince);
    }
    return this.state;
  }
}
