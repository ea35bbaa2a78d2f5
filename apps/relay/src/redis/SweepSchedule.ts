import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

/** The sweep's interval while some cluster primary does not notify: its keys' entries come only by it. */
export const UNNOTIFIED_SWEEP_MS = 5_000;
/** How often a cluster reader's schedule looks at `unnotified` again. */
export const SWEEP_LOOK_MS = 1_000;

export interface SweepScheduleOptions {
  readonly clock: Clock;
  /** The slow sweep: every watched key is read this often whatever else happened. */
  readonly intervalMs: number;
  /** Some primary does not notify now: sweep every UNNOTIFIED_SWEEP_MS (or `intervalMs` if shorter). */
  readonly unnotified?: () => boolean;
  readonly onDue: () => void;
}

/**
 * When a NotifyReader reads every watched key. Normally every `intervalMs` (the backstop for
 * what no hint shows). While a cluster primary does not notify, its keys' entries come only by
 * the sweep: then it runs at once (within SWEEP_LOOK_MS of being told) and every
 * UNNOTIFIED_SWEEP_MS after.
 */
export class SweepSchedule {
  private running = true;
  private stop: () => void = () => undefined;

  constructor(private readonly options: SweepScheduleOptions) {
    void this.loop();
  }

  close(): void {
    this.running = false;
    this.stop();
  }

  private async loop(): Promise<void> {
    const stopped = new Promise<void>((resolve) => (this.stop = resolve));
    const { clock, unnotified } = this.options;
    let last = clock.now();
    let wasUnnotified = false;
    while (this.running) {
      const left = Math.max(0, last + this.interval() - clock.now());
      // Only a cluster's reader is told of primaries that stopped notifying, so only it looks often.
      await Promise.race([sleepOn(clock, unnotified === undefined ? left : Math.min(left, SWEEP_LOOK_MS)), stopped]);
      if (!this.running) return;
      const now = unnotified?.() === true;
      const due = clock.now() - last >= this.interval() || (now && !wasUnnotified);
      wasUnnotified = now;
      if (!due) continue;
      last = clock.now();
      this.options.onDue();
    }
  }

  private interval(): number {
    const interval = this.options.intervalMs;
    return this.options.unnotified?.() === true ? Math.min(interval, UNNOTIFIED_SWEEP_MS) : interval;
  }
}
