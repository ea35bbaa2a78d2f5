import type { Clock } from '../Clock.js';

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A clock that moves only when a test says so. Timers run in due order (ties in the order they
 * were set), each with `now()` equal to its due time, like real timers on an idle loop.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<Pending>();

  constructor(startMs: number) {
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
  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(targetMs: number): void {
    for (;;) {
      const next = this.nextDue(targetMs);
      if (next === null) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = Math.max(this.current, targetMs);
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
