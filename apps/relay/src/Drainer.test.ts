import { describe, expect, it } from 'vitest';
import { Drainer } from './Drainer.js';
import type { Clock } from '@streamgate/protocol';
import { ManualClock } from '@streamgate/protocol/testing';
import type { DrainOutcome } from './Drainer.js';

/** A target that closes itself when drained, as a socket does, and remembers when. */
function fleet(drainer: Drainer<Target>, clock: ManualClock, n: number, startedAt = 0): Target[] {
  const targets: Target[] = [];
  for (let i = 0; i < n; i++) {
    const t: Target = {
      drainedAt: null,
      drain: (sinceDrainMs, dueMs) => {
        expect(sinceDrainMs).toBe(Math.round(clock.now() - startedAt));
        t.dueMs = dueMs;
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
  /** The schedule's due time the notice carried. */
  dueMs?: number;
  drain(sinceDrainMs: number, dueMs: number): void;
}

/** Deterministic stand-in for Math.random: the given values in turn. */
function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

/** Timers that fire only when told, at whatever time the test says: a busy event loop. */
function firedByHand(): { clock: Clock; timers: Array<{ fn: () => void; at: number }>; setNow: (ms: number) => void } {
  let now = 0;
  const timers: Array<{ fn: () => void; at: number }> = [];
  const clock: Clock = {
    now: () => now,
    after: (ms, fn) => {
      timers.push({ fn, at: now + ms });
      return () => undefined;
    },
  };
  return { clock, timers, setNow: (ms) => (now = ms) };
}

describe('Drainer', () => {
  it('sends each connection away in its own slot of the window, slots dealt at random, and reports drained when the last is gone', async () => {
    const clock = new ManualClock();
    // Three slots of 1 s. Shuffle draws 0.5, 0.5 deal the slots 0, 2, 1; each delay is mid-slot.
    const drainer = new Drainer<Target>({ windowMs: 3_000, fastWindowMs: 100, deadlineMs: 4_000, clock, random: sequence([0.5]) });
    const targets = fleet(drainer, clock, 3);
    let outcome: DrainOutcome | undefined;
    void drainer.start().then((o) => (outcome = o));
    expect(drainer.draining).toBe(true);

    clock.advanceSync(1_499);
    expect(targets.map((t) => t.drainedAt)).toEqual([500, null, null]);
    clock.advanceSync(2_000);
    expect(targets.map((t) => t.drainedAt)).toEqual([500, 2_500, 1_500]);
    await Promise.resolve();
    expect(outcome).toBe('drained');
    expect(drainer.outcome).toBe('drained');
    expect(clock.pending).toBe(0);
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
    expect(clock.pending).toBe(0);

    const empty = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 100, deadlineMs: 2_000, clock });
    expect(await empty.start()).toBe('drained');
  });

  it('at the deadline sends away whatever is left and reports deadline', async () => {
    const clock = new ManualClock();
    // Two slots of 5 s, dealt in order (shuffle draw 0.9); offsets 0.2 and 0.9 of a slot.
    const drainer = new Drainer<Target>({
      windowMs: 10_000,
      fastWindowMs: 100,
      deadlineMs: 3_000,
      clock,
      random: sequence([0.9, 0.2, 0.9]),
    });
    // A socket whose close is never reported must not keep the drain open past the deadline.
    const stuck = { drainedAt: null as number | null, drain: () => (stuck.drainedAt = clock.now()) };
    drainer.track(stuck);
    const [early] = fleet(drainer, clock, 1);
    let outcome: DrainOutcome | undefined;
    void drainer.start().then((o) => (outcome = o));
    expect(drainer.outcome).toBeNull();
    clock.advanceSync(3_000);
    await Promise.resolve();
    // The stuck one was sent away at its own time (1 s); the other one, due at 9.5 s, at the deadline.
    expect(stuck.drainedAt).toBe(1_000);
    expect(early?.drainedAt).toBe(3_000);
    expect(outcome).toBe('deadline');
    expect(drainer.outcome).toBe('deadline');
    expect(clock.pending).toBe(0);
  });

  it('hurry() redraws remaining delays over the fast window, never postponing one', () => {
    const clock = new ManualClock();
    // Window: three slots of 4 s dealt 2, 0, 1 (shuffle draws 0.5, 0.125), offsets 0.25, 0.125,
    // 0.25 of a slot: 9 s, 0.5 s, 5 s. Fast: three slots of 1 s dealt in order (0.875, 0.875),
    // mid-slot: 0.5 s, 1.5 s, 2.5 s.
    const drainer = new Drainer<Target>({
      windowMs: 12_000,
      fastWindowMs: 3_000,
      deadlineMs: 20_000,
      clock,
      random: sequence([0.5, 0.125, 0.25, 0.125, 0.25, 0.875, 0.875, 0.5, 0.5, 0.5]),
    });
    const targets = fleet(drainer, clock, 3, 50);
    clock.advanceSync(50);
    expect(drainer.schedule).toBeNull();
    void drainer.start();
    expect(drainer.schedule).toEqual({ startedAt: 50, windowMs: 12_000, connectionsAtStart: 3 });
    clock.advanceSync(100);
    drainer.hurry();
    // The schedule shown is the one now followed: the fast window from the hurry, over those still open.
    expect(drainer.schedule).toEqual({ startedAt: 150, windowMs: 3_000, connectionsAtStart: 3 });
    clock.advanceSync(3_000);
    // 9 s became 150 + 500 ms and 5 s became 150 + 2.5 s; the one due at 550 ms kept its own time.
    expect(targets.map((t) => t.drainedAt)).toEqual([650, 550, 2_650]);
  });

  it('reports how late its timers sent the notices, leaving out those sent early by the deadline', async () => {
    const { clock, timers, setNow } = firedByHand();
    // Three slots of 1 s dealt 0, 2, 1 (0.5, 0.5), mid-slot: due at 0.5 s, 1.5 s, 2.5 s; deadline 4 s.
    const drainer = new Drainer<Target>({ windowMs: 3_000, fastWindowMs: 10, deadlineMs: 4_000, clock, random: sequence([0.5]) });
    // Targets that never report their close, so the deadline comes; each keeps the stamps it was sent.
    const sent: Array<[number, number]> = [];
    for (let i = 0; i < 3; i++) drainer.track({ drainedAt: null, drain: (sinceDrainMs, dueMs) => void sent.push([sinceDrainMs, dueMs]) });
    const done = drainer.start();
    const [first, second, , deadline] = [...timers].sort((x, y) => x.at - y.at);
    expect([first?.at, second?.at, deadline?.at]).toEqual([500, 1_500, 4_000]);
    setNow(520);
    first?.fn();
    setNow(1_600);
    second?.fn();
    setNow(4_100);
    deadline?.fn();
    expect(await done).toBe('deadline');
    // 20 ms and 100 ms late; the third was sent by the deadline, before its timer fired: not late.
    expect(drainer.lateness()).toEqual({ notices: 2, p50Ms: 100, p99Ms: 100, maxMs: 100 });
    // Each notice carries when it went out and when it was due, the one sent by the deadline too.
    expect(sent).toEqual([
      [520, 500],
      [1_600, 1_500],
      [4_100, 2_500],
    ]);
  });

  it('never stamps a notice sent by its own timer as early, though the timer fired a fraction early', () => {
    const { clock, timers, setNow } = firedByHand();
    // One slot of 1001.2 ms: due mid-slot at 500.6, which rounds to 501.
    const drainer = new Drainer<Target>({ windowMs: 1_001.2, fastWindowMs: 10, deadlineMs: 4_000, clock, random: sequence([0.5]) });
    const sent: Array<[number, number]> = [];
    drainer.track({ drainedAt: null, drain: (sinceDrainMs, dueMs) => void sent.push([sinceDrainMs, dueMs]) });
    void drainer.start();
    const [timer] = [...timers].sort((x, y) => x.at - y.at);
    setNow(500.4); // libuv rounds timers to whole milliseconds
    timer?.fn();
    expect(sent).toEqual([[501, 501]]);
  });

  it('hurry() before a drain does nothing', () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 10, deadlineMs: 2_000, clock });
    fleet(drainer, clock, 2);
    drainer.hurry();
    expect(drainer.draining).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it('draws from Math.random by default: exactly one connection per slot, in an order that is not the order of arrival', async () => {
    const clock = new ManualClock();
    const drainer = new Drainer<Target>({ windowMs: 1_000, fastWindowMs: 10, deadlineMs: 2_000, clock });
    const targets = fleet(drainer, clock, 200);
    const done = drainer.start();
    clock.advanceSync(1_000);
    expect(await done).toBe('drained');
    const times = targets.map((t) => t.drainedAt ?? Number.NaN);
    // 200 slots of 5 ms: the k-th notice falls in the k-th slot.
    const sorted = [...times].sort((x, y) => x - y);
    expect(sorted.every((t, k) => t >= k * 5 && t < (k + 1) * 5)).toBe(true);
    // Dealt at random: the first connections tracked are not the first sent away (a fixed
    // order would make a pod's oldest connections always leave first). All 100 in the first
    // half by chance: once in 10^59.
    expect(times.slice(0, 100).some((t) => t >= 500)).toBe(true);
  });
});
