import { describe, expect, it } from 'vitest';
import { Drainer } from './Drainer.js';
import type { DrainClock, DrainOutcome } from './Drainer.js';

/** A clock that moves only when told, firing due timers in order. */
class ManualClock implements DrainClock {
  #now = 0;
  #next = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get timerCount(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].fn();
    }
    this.#now = end;
  }
}

/** A target that closes itself when drained, as a socket does, and remembers when. */
function fleet(drainer: Drainer<Target>, clock: ManualClock, n: number, startedAt = 0): Target[] {
  const targets: Target[] = [];
  for (let i = 0; i < n; i++) {
    const t: Target = {
      drainedAt: null,
      drain: (sinceDrainMs) => {
        expect(sinceDrainMs).toBe(Math.round(clock.now() - startedAt));
        t.drainedAt = clock.now();
        drainer.untrack(t);
      },
    };
    drainer.track(t);
    targets.push(t);
  }
  return targets;
}

interface Target {
  drainedAt: number | null;
  drain(sinceDrainMs: number): void;
}

/** Deterministic stand-in for Math.random: the given values in turn. */
function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

describe('Drainer', () => {
  it('sends each connection away after its own uniform delay and reports drained when the last is gone', async () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({
      windowMs: 1_000,
      fastWindowMs: 100,
      deadlineMs: 2_000,
      clock,
      random: sequence([0.5, 0.1, 0.9]),
    });
    const targets = fleet(drainer, clock, 3);
    let outcome: DrainOutcome | undefined;
    void drainer.start().then((o) => (outcome = o));
    expect(drainer.draining).toBe(true);

    clock.advance(499);
    expect(targets.map((t) => t.drainedAt)).toEqual([null, 100, null]);
    clock.advance(1_000);
    expect(targets.map((t) => t.drainedAt)).toEqual([500, 100, 900]);
    await Promise.resolve();
    expect(outcome).toBe('drained');
    expect(drainer.outcome).toBe('drained');
    expect(clock.timerCount).toBe(0);
  });

  it('forgets connections that close on their own, and drains at once when none is open', async () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 100, deadlineMs: 2_000, clock, random: sequence([0.5]) });
    const [a, b] = fleet(drainer, clock, 2);
    if (a === undefined || b === undefined) throw new Error('two targets expected');
    const done = drainer.start();
    drainer.untrack(a);
    drainer.untrack(b);
    expect(await done).toBe('drained');
    expect(a.drainedAt).toBeNull();
    expect(clock.timerCount).toBe(0);

    const empty = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 100, deadlineMs: 2_000, clock });
    expect(await empty.start()).toBe('drained');
  });

  it('at the deadline sends away whatever is left and reports deadline', async () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 10_000, fastWindowMs: 100, deadlineMs: 3_000, clock, random: sequence([0.1, 0.9]) });
    // A socket whose close is never reported must not keep the drain open past the deadline.
    const stuck = { drainedAt: null as number | null, drain: () => (stuck.drainedAt = clock.now()) };
    drainer.track(stuck);
    const [early] = fleet(drainer, clock, 1);
    let outcome: DrainOutcome | undefined;
    void drainer.start().then((o) => (outcome = o));
    expect(drainer.outcome).toBeNull();
    clock.advance(3_000);
    await Promise.resolve();
    // The stuck one was sent away at its own time (0.1 of the window); the other one, due at
    // 9 s, at the deadline.
    expect(stuck.drainedAt).toBe(1_000);
    expect(early?.drainedAt).toBe(3_000);
    expect(outcome).toBe('deadline');
    expect(drainer.outcome).toBe('deadline');
    expect(clock.timerCount).toBe(0);
  });

  it('hurry() redraws remaining delays over the fast window, never postponing one', () => {
    const clock = new ManualClock();
    // Window draws: 0.9, 0.05, 0.5 of 10 s; fast draws: 0.5, 0.5, 0.5 of 1 s.
    const drainer = new Drainer<Target>({
      windowMs: 10_000,
      fastWindowMs: 1_000,
      deadlineMs: 20_000,
      clock,
      random: sequence([0.9, 0.05, 0.5, 0.5, 0.5, 0.5]),
    });
    const targets = fleet(drainer, clock, 3, 50);
    clock.advance(50);
    expect(drainer.schedule).toBeNull();
    void drainer.start();
    expect(drainer.schedule).toEqual({ startedAt: 50, windowMs: 10_000, connectionsAtStart: 3 });
    clock.advance(100);
    drainer.hurry();
    // The schedule shown is the one now followed: the fast window from the hurry, over those still open.
    expect(drainer.schedule).toEqual({ startedAt: 150, windowMs: 1_000, connectionsAtStart: 3 });
    clock.advance(1_000);
    // 9 s and 5 s were redrawn to 150 + 500 ms; the one due at 550 ms kept its own time.
    expect(targets.map((t) => t.drainedAt)).toEqual([650, 550, 650]);
  });

  it('hurry() before a drain does nothing', () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 10, deadlineMs: 2_000, clock });
    fleet(drainer, clock, 2);
    drainer.hurry();
    expect(drainer.draining).toBe(false);
    expect(clock.timerCount).toBe(0);
  });

  it('draws from Math.random by default, spreading delays over the window', async () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 10, deadlineMs: 2_000, clock });
    const targets = fleet(drainer, clock, 200);
    const done = drainer.start();
    clock.advance(1_000);
    expect(await done).toBe('drained');
    const times = targets.map((t) => t.drainedAt ?? Number.NaN);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...times)).toBeLessThan(1_000);
    // Half the connections in each half of the window, within a wide margin.
    const firstHalf = times.filter((t) => t < 500).length;
    expect(firstHalf).toBeGreaterThan(60);
    expect(firstHalf).toBeLessThan(140);
  });
});
