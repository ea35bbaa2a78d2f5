/** A connection the drainer can send away: it gets its reconnect notice and is closed. */
export interface DrainTarget {
  /** `sinceDrainMs`: time from the start of the drain to now. */
  drain(sinceDrainMs: number): void;
}

/** Timers and time, injectable so that schedules can be tested without waiting. */
export interface DrainClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: DrainClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface DrainerOptions {
  /** Each open connection is sent away after a delay drawn uniformly from [0, windowMs). */
  readonly windowMs: number;
  /** After `hurry()`, remaining delays are redrawn from [0, fastWindowMs) when that is sooner. */
  readonly fastWindowMs: number;
  /** From the start of the drain: whatever is still open then is sent away at once. */
  readonly deadlineMs: number;
  /** Uniform in [0, 1), like Math.random. */
  readonly random?: () => number;
  readonly clock?: DrainClock;
}

/**
 * The uniform schedule a drain follows now: connections left ≈ connectionsAtStart × (1 − t / windowMs)
 * for t since startedAt. A hurried drain starts a new schedule over the fast window.
 */
export interface DrainSchedule {
  /** Ms since the epoch (on the drainer's clock). */
  readonly startedAt: number;
  readonly windowMs: number;
  readonly connectionsAtStart: number;
}

/** How a drain ended: every connection left, or the deadline came first. */
export type DrainOutcome = 'drained' | 'deadline';

interface Pending {
  dueAt: number;
  handle: unknown;
}

/**
 * Spreads the reconnects of a pod's clients uniformly over a window instead of dropping them all
 * at once: a deploy then costs the fleet a steady trickle of resumes, never a herd (the reason the
 * design exists). Connections are tracked from open to close; once draining, each one still open
 * gets its own uniform delay, measured from the start of the drain.
 */
export class Drainer<T extends DrainTarget> {
  readonly #options: DrainerOptions;
  readonly #random: () => number;
  readonly #clock: DrainClock;
  readonly #open = new Set<T>();
  readonly #pending = new Map<T, Pending>();
  #startedAt: number | null = null;
  #inForce: DrainSchedule | null = null;
  #hurried = false;
  #outcome: DrainOutcome | null = null;
  #deadline: unknown = null;
  #finish: ((outcome: DrainOutcome) => void) | null = null;
  #done: Promise<DrainOutcome> | null = null;

  constructor(options: DrainerOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? systemClock;
  }

  get draining(): boolean {
    return this.#startedAt !== null;
  }

  get openCount(): number {
    return this.#open.size;
  }

  /** The schedule in force, for the operations snapshot; null before the drain. */
  get schedule(): DrainSchedule | null {
    return this.#inForce;
  }

  /** How the drain ended, for the last operations snapshot; null before its end. */
  get outcome(): DrainOutcome | null {
    return this.#outcome;
  }

  /** Milliseconds since the drain started, or null before. */
  elapsed(): number | null {
    return this.#startedAt === null ? null : this.#clock.now() - this.#startedAt;
  }

  track(target: T): void {
    this.#open.add(target);
  }

  /** The connection closed, whoever closed it. */
  untrack(target: T): void {
    this.#open.delete(target);
    const pending = this.#pending.get(target);
    if (pending !== undefined) {
      this.#clock.clearTimeout(pending.handle);
      this.#pending.delete(target);
    }
    this.#settleIfEmpty();
  }

  /** Starts the drain once; later calls return the same outcome. */
  start(): Promise<DrainOutcome> {
    if (this.#done !== null) return this.#done;
    this.#done = new Promise<DrainOutcome>((resolve) => (this.#finish = resolve));
    this.#startedAt = this.#clock.now();
    this.#inForce = { startedAt: this.#startedAt, windowMs: this.#options.windowMs, connectionsAtStart: this.#open.size };
    for (const target of this.#open) this.#schedule(target, this.#draw(this.#options.windowMs));
    this.#deadline = this.#clock.setTimeout(() => {
      this.#deadline = null;
      for (const target of [...this.#pending.keys()]) this.#fire(target);
      // Targets whose close has not been reported yet must not hold the process past its deadline.
      this.#settle('deadline');
    }, this.#options.deadlineMs);
    this.#settleIfEmpty();
    return this.#done;
  }

  /**
   * A second signal: the operator wants the pod gone sooner. Every remaining delay is redrawn
   * uniformly from [0, fastWindowMs) and kept only if sooner, so the reconnects stay spread
   * (over the short window) and nobody's is postponed.
   */
  hurry(): void {
    if (!this.draining || this.#hurried) return;
    this.#hurried = true;
    const now = this.#clock.now();
    // Delays are only ever shortened, so the fast schedule applies where it ends sooner.
    const current = this.#inForce;
    if (current !== null && now + this.#options.fastWindowMs < current.startedAt + current.windowMs) {
      this.#inForce = { startedAt: now, windowMs: this.#options.fastWindowMs, connectionsAtStart: this.#open.size };
    }
    for (const [target, pending] of [...this.#pending]) {
      const delay = this.#draw(this.#options.fastWindowMs);
      if (now + delay < pending.dueAt) {
        this.#clock.clearTimeout(pending.handle);
        this.#schedule(target, delay);
      }
    }
  }

  #draw(windowMs: number): number {
    return this.#random() * windowMs;
  }

  #schedule(target: T, delayMs: number): void {
    const handle = this.#clock.setTimeout(() => this.#fire(target), delayMs);
    this.#pending.set(target, { dueAt: this.#clock.now() + delayMs, handle });
  }

  #fire(target: T): void {
    const pending = this.#pending.get(target);
    if (pending !== undefined) this.#clock.clearTimeout(pending.handle);
    this.#pending.delete(target);
    target.drain(Math.max(0, Math.round(this.#clock.now() - (this.#startedAt ?? this.#clock.now()))));
  }

  #settleIfEmpty(): void {
    if (this.draining && this.#open.size === 0) this.#settle('drained');
  }

  #settle(outcome: DrainOutcome): void {
    const finish = this.#finish;
    if (finish === null) return;
    this.#finish = null;
    this.#outcome = outcome;
    if (this.#deadline !== null) this.#clock.clearTimeout(this.#deadline);
    this.#deadline = null;
    for (const pending of this.#pending.values()) this.#clock.clearTimeout(pending.handle);
    this.#pending.clear();
    finish(outcome);
  }
}
