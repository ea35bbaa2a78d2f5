import { systemClock } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

/** A connection the drainer can send away: it gets its reconnect notice and is closed. */
export interface DrainTarget {
  /**
   * `sinceDrainMs`: time from the start of the drain to now; `dueMs`: when this notice was due on
   * the drain's schedule, on the same clock. Their difference is how late the timers sent it.
   */
  drain(sinceDrainMs: number, dueMs: number): void;
}

export interface DrainerOptions {
  /**
   * Each open connection is sent away after a delay uniform over [0, windowMs), the delays
   * together one per slot of windowMs / connections (spread).
   */
  readonly windowMs: number;
  /** After `hurry()`, remaining delays are redrawn over [0, fastWindowMs) the same way, each kept when sooner. */
  readonly fastWindowMs: number;
  /** From the start of the drain: whatever is still open then is sent away at once. */
  readonly deadlineMs: number;
  /** Uniform in [0, 1), like Math.random. */
  readonly random?: () => number;
  /** Injected so that schedules can be tested without waiting. */
  readonly clock?: Clock;
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

/** Drainer.lateness(). */
export interface DrainLateness {
  readonly notices: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** How a drain ended: every connection left, or the deadline came first. */
export type DrainOutcome = 'drained' | 'deadline';

interface Pending {
  dueAt: number;
  cancel: () => void;
}

/**
 * Spreads the reconnects of a pod's clients uniformly over a window instead of dropping them all
 * at once: a deploy then costs the fleet a steady trickle of resumes, never a herd (the reason the
 * design exists). Connections are tracked from open to close; once draining, each one still open
 * gets its own delay, measured from the start of the drain: the window is cut into one slot per
 * connection, the slots are dealt out in random order, and each delay is uniform within its slot.
 * Each delay is then uniform over the window, as an independent draw would be, but the rate is
 * even throughout: independent draws bunch (for 2,000 connections the busiest hundredth of the
 * window typically gets 32 reconnects instead of its 20), a dealt schedule never does.
 */
export class Drainer<T extends DrainTarget> {
  readonly #options: DrainerOptions;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #open = new Set<T>();
  readonly #pending = new Map<T, Pending>();
  #startedAt: number | null = null;
  #inForce: DrainSchedule | null = null;
  #hurried = false;
  #outcome: DrainOutcome | null = null;
  #cancelDeadline: (() => void) | null = null;
  #finish: ((outcome: DrainOutcome) => void) | null = null;
  /** How late each notice sent on its timer went out, in ms: what a busy event loop cost the schedule. */
  readonly #lateness: number[] = [];
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

  /**
   * How far behind its schedule the drain sent its notices (timers fire late on a busy event
   * loop): the count of notices sent on their timers, and the median, 99th percentile and
   * largest delay past their due time, in ms.
   */
  lateness(): DrainLateness {
    const sorted = [...this.#lateness].sort((x, y) => x - y);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return { notices: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? 0 };
  }

  track(target: T): void {
    this.#open.add(target);
  }

  /** The connection closed, whoever closed it. */
  untrack(target: T): void {
    this.#open.delete(target);
    const pending = this.#pending.get(target);
    if (pending !== undefined) {
      pending.cancel();
      this.#pending.delete(target);
    }
    this.#settleIfEmpty();
  }

  /** Starts the drain once; later calls return the same outcome. */
  start(): Promise<DrainOutcome> {
    if (this.#done !== null) return this.#done;
    this.#done = new Promise<DrainOutcome>((resolve) => (this.#finish = resolve));
    const startedAt = this.#clock.now();
    this.#startedAt = startedAt;
    this.#inForce = { startedAt, windowMs: this.#options.windowMs, connectionsAtStart: this.#open.size };
    const delays = this.#spread(this.#open.size, this.#options.windowMs);
    let k = 0;
    for (const target of this.#open) this.#schedule(target, startedAt + (delays[k++] ?? 0));
    this.#cancelDeadline = this.#clock.after(this.#options.deadlineMs, () => {
      this.#cancelDeadline = null;
      for (const target of [...this.#pending.keys()]) this.#fire(target);
      // Targets whose close has not been reported yet must not hold the process past its deadline.
      this.#settle('deadline');
    });
    this.#settleIfEmpty();
    return this.#done;
  }

  /**
   * A second signal: the operator wants the pod gone sooner. Every remaining delay is redrawn
   * over [0, fastWindowMs) (spread, like the first) and kept only if sooner, so the reconnects
   * stay spread (over the short window) and nobody's is postponed.
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
    const pendings = [...this.#pending];
    const delays = this.#spread(pendings.length, this.#options.fastWindowMs);
    for (const [k, [target, pending]] of pendings.entries()) {
      const delay = delays[k] ?? 0;
      if (now + delay < pending.dueAt) {
        pending.cancel();
        this.#schedule(target, now + delay);
      }
    }
  }

  /** `count` delays over [0, windowMs): one in each of `count` equal slots, the slots in random order. */
  #spread(count: number, windowMs: number): number[] {
    const slots = Array.from({ length: count }, (_, i) => i);
    // Fisher–Yates: every order of the slots equally likely.
    for (let i = count - 1; i > 0; i--) {
      const j = Math.floor(this.#random() * (i + 1));
      const slot = slots[i] ?? 0;
      slots[i] = slots[j] ?? 0;
      slots[j] = slot;
    }
    return slots.map((slot) => ((slot + this.#random()) * windowMs) / count);
  }

  /** Due times are absolute: scheduling thousands of timers takes a while, which must not push the later ones back. */
  #schedule(target: T, dueAt: number): void {
    const cancel = this.#clock.after(Math.max(0, dueAt - this.#clock.now()), () => this.#fire(target));
    this.#pending.set(target, { dueAt, cancel });
  }

  #fire(target: T): void {
    const pending = this.#pending.get(target);
    if (pending !== undefined) {
      pending.cancel();
      // Sent at the deadline, a notice is early, not late.
      if (this.#cancelDeadline !== null) this.#lateness.push(Math.max(0, this.#clock.now() - pending.dueAt));
    }
    this.#pending.delete(target);
    const startedAt = this.#startedAt ?? this.#clock.now();
    const since = Math.max(0, Math.round(this.#clock.now() - startedAt));
    if (pending === undefined) return target.drain(since, since);
    const dueMs = Math.max(0, Math.round(pending.dueAt - startedAt));
    // A timer may fire a fraction of a millisecond before its fractional due time; only a notice
    // the deadline sent ahead of its turn is early (sinceDrainMs below dueMs, docs/protocol.md §4).
    const onItsTimer = this.#cancelDeadline !== null;
    target.drain(onItsTimer ? Math.max(since, dueMs) : since, dueMs);
  }

  #settleIfEmpty(): void {
    if (this.draining && this.#open.size === 0) this.#settle('drained');
  }

  #settle(outcome: DrainOutcome): void {
    const finish = this.#finish;
    if (finish === null) return;
    this.#finish = null;
    this.#outcome = outcome;
    this.#cancelDeadline?.();
    this.#cancelDeadline = null;
    for (const pending of this.#pending.values()) pending.cancel();
    this.#pending.clear();
    finish(outcome);
  }
}
