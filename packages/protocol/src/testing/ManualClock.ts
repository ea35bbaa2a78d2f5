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
 * The one fake `Clock`: it moves only when a test says so. Timers run in due order (ties in the
 * order they were set), each with `now()` equal to its due time.
 *
 * `advance` lets the async work each timer wakes run to its next wait before the next one fires,
 * like real timers on an otherwise idle loop (for code that sleeps in loops). `advanceSync` runs
 * them back to back, synchronously, for code whose timers do all their work in the callback.
 */
export class ManualClock implements Clock {
  #current: number;
  #seq = 0;
  readonly #timers = new Set<Pending>();

  constructor(startMs = 0) {
    this.#current = startMs;
  }

  now(): number {
    return this.#current;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: Pending = { at: this.#current + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (including ones they set). */
  advanceSync(ms: number): void {
    this.advanceToSync(this.#current + ms);
  }

  advanceToSync(targetMs: number): void {
    for (;;) {
      const next = this.#nextDue(targetMs);
      if (next === null) break;
      this.#fire(next);
    }
    this.#current = Math.max(this.#current, targetMs);
  }

  /** `advanceSync`, settling what was already woken first and what each timer wakes before the next fires. */
  async advance(ms: number): Promise<void> {
    const target = this.#current + ms;
    // What is already woken runs first, so a timer it sets counts from now.
    await settle();
    for (;;) {
      const next = this.#nextDue(target);
      if (next === null) break;
      this.#fire(next);
      await settle();
    }
    this.#current = Math.max(this.#current, target);
    await settle();
  }

  /** Advances (settling) in `stepMs` steps until `predicate` holds; fails after `limitMs` of fake time. */
  async until(predicate: () => boolean, limitMs: number, stepMs = 10): Promise<void> {
    const deadline = this.#current + limitMs;
    await settle();
    while (!predicate()) {
      if (this.#current >= deadline) throw new Error(`condition not met within ${limitMs} ms of fake time`);
      await this.advance(stepMs);
    }
  }

  #fire(timer: Pending): void {
    this.#timers.delete(timer);
    this.#current = Math.max(this.#current, timer.at);
    timer.fn();
  }

  #nextDue(limit: number): Pending | null {
    let best: Pending | null = null;
    for (const t of this.#timers) {
      if (t.at > limit) continue;
      if (best === null || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
