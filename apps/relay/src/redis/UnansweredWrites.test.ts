import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { UnansweredWrites } from './UnansweredWrites.js';

/** The end of the turn stepped by hand: `endTurn()` runs what `afterTurn` was given. */
function harness() {
  const clock = new ManualClock();
  const read: string[][] = [];
  const queued: Array<() => void> = [];
  const writes = new UnansweredWrites(
    clock,
    1,
    (keys) => read.push(keys),
    (fn) => queued.push(fn),
  );
  const endTurn = (): void => {
    for (const fn of queued.splice(0)) fn();
  };
  return { clock, read, writes, queued, endTurn };
}

describe('UnansweredWrites', () => {
  it('arms no timer for events answered within the turn, so the loop is not woken again', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.written('b');
    // One look for the turn, however many events it brings.
    expect(h.queued).toHaveLength(1);
    h.writes.answered('a');
    h.writes.answered('b');
    h.endTurn();
    expect(h.clock.pending).toBe(0);
    h.clock.advanceSync(5);
    expect(h.read).toEqual([]);
  });

  it('gives a message that misses the turn the window to arrive in', () => {
    const h = harness();
    h.writes.written('a');
    h.endTurn();
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
    h.endTurn();
    expect(h.read).toEqual([]);
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a']]);
    expect(h.clock.pending).toBe(0);
    // A new turn starts with the next event.
    h.writes.written('c');
    h.endTurn();
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a'], ['c']]);
  });

  it('lets events of a later turn join an open window, asking no look of their own', () => {
    const h = harness();
    h.writes.written('a');
    h.endTurn();
    h.writes.written('b');
    h.writes.written('c');
    expect(h.queued).toHaveLength(0);
    h.writes.answered('c');
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a', 'b']]);
  });

  it('a look queued before every event was answered finds nothing, and a later event queues its own', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.answered('a');
    h.writes.written('b');
    // The first look is still queued: it covers b too.
    expect(h.queued).toHaveLength(1);
    h.endTurn();
    expect(h.clock.pending).toBe(1);
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['b']]);
  });

  it('forgets keys no longer watched, and stops on close', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.forget('a');
    h.endTurn();
    expect(h.clock.pending).toBe(0);
    h.writes.written('b');
    h.endTurn();
    h.writes.close();
    expect(h.clock.pending).toBe(0);
    h.clock.advanceSync(5);
    expect(h.read).toEqual([]);
  });

  it('by default looks once the code that delivered the events has returned, before any timer or immediate', async () => {
    const clock = new ManualClock();
    const read: string[][] = [];
    const writes = new UnansweredWrites(clock, 1, (keys) => read.push(keys));
    writes.written('a');
    expect(clock.pending).toBe(0);
    await Promise.resolve();
    // The look ran: the unanswered event has its window.
    expect(clock.pending).toBe(1);
    clock.advanceSync(1);
    expect(read).toEqual([['a']]);
  });
});
