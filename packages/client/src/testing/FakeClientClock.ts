import type { ClientClock } from '../Clock.js';

/** A clock that moves only when a test says so; due timers run in order, each at its due time. */
export class FakeClientClock implements ClientClock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): () => void {
    const id = this.#seq++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return () => this.#timers.delete(id);
  }

  get pending(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) {
        if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
      }
      if (next === undefined) break;
      this.#timers.delete(next[0]);
      this.#now = Math.max(this.#now, next[1].at);
      next[1].fn();
    }
    this.#now = target;
  }
}
