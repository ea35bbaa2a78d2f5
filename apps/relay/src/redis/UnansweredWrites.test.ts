import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { UnansweredWrites } from './UnansweredWrites.js';

function harness() {
  const clock = new ManualClock();
  const read: string[][] = [];
  const writes = new UnansweredWrites(clock, 1, (keys) => read.push(keys));
  return { clock, read, writes };
}

describe('UnansweredWrites', () => {
  it('arms no timer for events answered within the turn, so the loop is not woken again', () => {
    const h = harness();
    const after: number[] = [];
    const clock = h.clock;
    const spy = { now: () => clock.now(), after: (ms: number, fn: () => void) => (after.push(ms), clock.after(ms, fn)) };
    const writes = new UnansweredWrites(spy, 1, (keys) => h.read.push(keys));
    writes.written('a');
    writes.written('b');
    writes.answered('a');
    expect(clock.pending).toBe(1);
    writes.answered('b');
    expect(clock.pending).toBe(0);
    clock.advanceSync(5);
    // Only the end-of-turn look was asked for, and no window followed it.
    expect(after).toEqual([0]);
    expect(h.read).toEqual([]);
  });

  it('gives a message that misses the turn the window to arrive in', () => {
    const h = harness();
    h.writes.written('a');
    h.clock.advanceSync(0);
    expect(h.clock.pending).toBe(1);
    h.writes.answered('a');
    expect(h.clock.pending).toBe(0);
    h.clock.advanceSync(5);
    expect(h.read).toEqual([]);
  });

  it('hands on, after the window, the keys with an event no message answered', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.written('a');
    h.writes.written('b');
    h.writes.answered('a');
    h.writes.answered('b');
    h.clock.advanceSync(0);
    expect(h.read).toEqual([]);
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a']]);
    expect(h.clock.pending).toBe(0);
    // A new turn starts with the next event.
    h.writes.written('c');
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a'], ['c']]);
  });

  it('lets events of a later turn join an open window', () => {
    const h = harness();
    h.writes.written('a');
    h.clock.advanceSync(0);
    h.writes.written('b');
    h.writes.written('c');
    h.writes.answered('c');
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a', 'b']]);
  });

  it('forgets keys no longer watched, and stops on close', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.forget('a');
    expect(h.clock.pending).toBe(0);
    h.writes.written('b');
    h.clock.advanceSync(0);
    h.writes.close();
    expect(h.clock.pending).toBe(0);
    h.clock.advanceSync(5);
    expect(h.read).toEqual([]);
  });
});
