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
  it('leaves no timer once every event is answered, so the loop is not woken again', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.written('b');
    expect(h.clock.pending).toBe(1);
    h.writes.answered('a');
    expect(h.clock.pending).toBe(1);
    h.writes.answered('b');
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
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a']]);
    expect(h.clock.pending).toBe(0);
    // A new window starts with the next event.
    h.writes.written('c');
    h.clock.advanceSync(1);
    expect(h.read).toEqual([['a'], ['c']]);
  });

  it('forgets keys no longer watched, and stops on close', () => {
    const h = harness();
    h.writes.written('a');
    h.writes.forget('a');
    expect(h.clock.pending).toBe(0);
    h.writes.written('b');
    h.writes.close();
    h.clock.advanceSync(5);
    expect(h.read).toEqual([]);
  });
});
