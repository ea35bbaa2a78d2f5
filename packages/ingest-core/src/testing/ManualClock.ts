import type { Clock } from '../Clock.js';

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** Lets the promise chains woken by a timer (or a fake reply) run to their next wait. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock that moves only when a test says so. Timers run in due order (ties in the order they
 * were set), each with `now()` equal to its due time, and the async work each one wakes runs to
 * its next wait before the next timer fires, like real timers on an otherwise idle loop.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<Pending>();

  constructor(startMs = 1_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (including ones they set). */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.nextDue(target);
      if (next === null) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = Math.max(this.current, target);
    await settle();
  }

  /** Advances in `stepMs` steps until `predicate` holds; fails after `limitMs` of fake time. */
  async until(predicate: () => boolean, limitMs: number, stepMs = 10): Promise<void> {
    const deadline = this.current + limitMs;
    await settle();
    while (!predicate()) {
      if (this.current >= deadline) throw new Error(`condition not met within ${limitMs} ms of fake time`);
      await this.advance(stepMs);
    }
  }

  private nextDue(limit: number): Pending | null {
    let best: Pending | null = null;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (best === null || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
