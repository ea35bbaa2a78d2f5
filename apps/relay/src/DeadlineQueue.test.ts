import { describe, expect, it } from 'vitest';
import { DeadlineQueue } from './DeadlineQueue.js';
import type { DeadlineOwner } from './DeadlineQueue.js';
import { ManualClock } from '@streamgate/protocol/testing';

const START = Date.UTC(2026, 0, 1);

/** Records each deadline it is told of, with the clock's time then. */
function recorder(clock: ManualClock, name: string, log: string[]): DeadlineOwner {
  return { onDeadline: (kind) => log.push(`${name}:${kind}@${clock.now() - START}`) };
}

describe('DeadlineQueue', () => {
  it('calls each deadline at its time, in time order and ties in the order they were added, on one timer', () => {
    const clock = new ManualClock(START);
    const queue = new DeadlineQueue(clock);
    const log: string[] = [];
    queue.add(START + 300, recorder(clock, 'c', log), 0);
    queue.add(START + 100, recorder(clock, 'a', log), 1);
    queue.add(START + 200, recorder(clock, 'b', log), 0);
    queue.add(START + 200, recorder(clock, 'b2', log), 1);
    expect(clock.pending).toBe(1);
    clock.advanceSync(199);
    expect(log).toEqual(['a:1@100']);
    clock.advanceSync(200);
    expect(log).toEqual(['a:1@100', 'b:0@200', 'b2:1@200', 'c:0@300']);
    expect(queue.size).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('never calls a cancelled deadline, and drops its timer once no deadline is left', () => {
    const clock = new ManualClock(START);
    const queue = new DeadlineQueue(clock);
    const log: string[] = [];
    const owners = Array.from({ length: 50 }, (_, i) => recorder(clock, `o${i}`, log));
    const deadlines = owners.map((owner, i) => queue.add(START + 10 * ((i * 7) % 50), owner, 0));
    // Cancel every even-numbered one (13 is prime to 25: each once), in an order unrelated to
    // their times, and one of them twice: the heap stays ordered and the odd ones all fire.
    for (let i = 0; i < 50; i += 2) queue.cancel(deadlines[(i * 13) % 50] as (typeof deadlines)[number]);
    queue.cancel(deadlines[0] as (typeof deadlines)[number]);
    clock.advanceSync(1_000);
    const expected = owners
      .map((_, i) => ({ i, at: 10 * ((i * 7) % 50) }))
      .filter(({ i }) => i % 2 === 1)
      .sort((x, y) => x.at - y.at)
      .map(({ i, at }) => `o${i}:0@${at}`);
    expect(log).toEqual(expected);
    expect(clock.pending).toBe(0);

    const lone = queue.add(START + 5_000, recorder(clock, 'lone', log), 0);
    expect(clock.pending).toBe(1);
    queue.cancel(lone);
    queue.cancel(lone);
    expect(clock.pending).toBe(0);
    clock.advanceSync(10_000);
    expect(log).toHaveLength(25);
  });

  it('re-arms for an earlier deadline added later, and runs deadlines added by a deadline that are already due', () => {
    const clock = new ManualClock(START);
    const queue = new DeadlineQueue(clock);
    const log: string[] = [];
    queue.add(START + 1_000, recorder(clock, 'late', log), 0);
    queue.add(START + 10, recorder(clock, 'early', log), 0);
    const chain: DeadlineOwner = {
      onDeadline: () => {
        log.push(`chain@${clock.now() - START}`);
        queue.add(clock.now(), recorder(clock, 'now', log), 0);
      },
    };
    queue.add(START + 20, chain, 0);
    clock.advanceSync(2_000);
    expect(log).toEqual(['early:0@10', 'chain@20', 'now:0@20', 'late:0@1000']);
  });

  it('keeps calling the other deadlines after an owner throws', () => {
    const clock = new ManualClock(START);
    const queue = new DeadlineQueue(clock);
    const log: string[] = [];
    queue.add(
      START + 10,
      {
        onDeadline: () => {
          throw new Error('owner bug');
        },
      },
      0,
    );
    queue.add(START + 20, recorder(clock, 'next', log), 0);
    expect(() => clock.advanceSync(15)).toThrow('owner bug');
    clock.advanceSync(10);
    expect(log).toEqual(['next:0@20']);
  });

  it('waits out a deadline beyond the longest timer in steps, never firing it early', () => {
    const clock = new ManualClock(START);
    const queue = new DeadlineQueue(clock);
    const log: string[] = [];
    const at = START + 40 * 86_400_000;
    queue.add(at, recorder(clock, 'far', log), 0);
    clock.advanceToSync(at - 1);
    expect(log).toEqual([]);
    clock.advanceSync(1);
    expect(log).toEqual([`far:0@${40 * 86_400_000}`]);
  });

  it('is one queue per clock', () => {
    const clock = new ManualClock(START);
    expect(DeadlineQueue.of(clock)).toBe(DeadlineQueue.of(clock));
    expect(DeadlineQueue.of(clock)).not.toBe(DeadlineQueue.of(new ManualClock(START)));
  });
});
