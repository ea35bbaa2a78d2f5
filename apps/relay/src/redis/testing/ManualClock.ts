import type { TimerClock } from '../TimerClock.js';

/** Lets the promise chains woken by a timer (or a fake reply) run to their next wait. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A TimerClock that moves only when told: sleepers wake in deadline order as time passes them. */
export class ManualClock implements TimerClock {
  private time = 0;
  private sleepers: Array<{ at: number; wake: () => void }> = [];

  now(): number {
    return this.time;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((wake) => this.sleepers.push({ at: this.time + Math.max(0, ms), wake }));
  }

  /** Sleepers waiting now. */
  get sleeping(): number {
    return this.sleepers.length;
  }

  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    // What is already woken runs first, so a sleep it starts counts from now.
    await settle();
    for (;;) {
      const due = this.sleepers.filter((s) => s.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.sleepers = this.sleepers.filter((s) => s !== due);
      this.time = Math.max(this.time, due.at);
      due.wake();
      await settle();
    }
    this.time = end;
    await settle();
  }
}
