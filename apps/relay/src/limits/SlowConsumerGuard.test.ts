import { describe, expect, it } from 'vitest';
import { CloseCode } from '@streamgate/protocol';
import { ManualClock } from '@streamgate/protocol/testing';
import { FakeConnection } from '../testing/FakeConnection.js';
import { SlowConsumerGuard } from './SlowConsumerGuard.js';

/** A connection that counts how often its buffer is looked at. */
class CountingConnection extends FakeConnection {
  looks = 0;
  override bufferedAmount(): number {
    this.looks++;
    return super.bufferedAmount();
  }
}

/** Queues `bytes` unsent bytes on the connection (one frame of that size). */
function queue(conn: FakeConnection, bytes: number): void {
  conn.bytesPerFrame = bytes;
  conn.send('{}');
  conn.bytesPerFrame = 0;
}

// The interval never fires in a test: each sweep is called by hand.
const guardOf = (onCut: (bytes: number) => void = () => undefined) =>
  new SlowConsumerGuard({ maxBufferedBytes: 1_000, checkIntervalMs: 1_000_000, slots: 4, onCut });

describe('SlowConsumerGuard', () => {
  it('looks at each socket without a backlog once per `slots` sweeps, a part of them per sweep', () => {
    const guard = guardOf();
    const conns = Array.from({ length: 40 }, () => new CountingConnection());
    for (const c of conns) guard.add(c);
    for (let sweep = 0; sweep < 4; sweep++) {
      guard.sweep();
      expect(conns.reduce((n, c) => n + c.looks, 0)).toBe(10 * (sweep + 1));
    }
    expect(conns.every((c) => c.looks === 1)).toBe(true);
    // The next round starts over.
    for (let sweep = 0; sweep < 4; sweep++) guard.sweep();
    expect(conns.every((c) => c.looks === 2)).toBe(true);
    guard.close();
  });

  it('cuts a socket past the limit with 4001 within one round', () => {
    const cuts: number[] = [];
    const guard = guardOf((bytes) => cuts.push(bytes));
    const conns = Array.from({ length: 8 }, () => new FakeConnection());
    for (const c of conns) guard.add(c);
    const slow = conns[5] as FakeConnection;
    queue(slow, 5_000);
    for (let sweep = 0; sweep < 4; sweep++) guard.sweep();
    expect(slow.closedWith?.code).toBe(CloseCode.slowConsumer);
    expect(cuts).toEqual([5_000]);
    expect(conns.filter((c) => c.closed)).toEqual([slow]);
    expect(guard.size.sockets).toBe(7);
    guard.close();
  });

  it('checks a socket seen with a backlog at every sweep, and no longer once it drained', () => {
    const cuts: number[] = [];
    const guard = guardOf((bytes) => cuts.push(bytes));
    const conns = Array.from({ length: 8 }, () => new CountingConnection());
    for (const c of conns) guard.add(c);
    const slow = conns[0] as CountingConnection;
    queue(slow, 100);
    guard.sweep();
    expect(guard.size.backlogged).toBe(1);
    // Below the limit, then past it: cut at the very next sweep, not a round later.
    guard.sweep();
    guard.sweep();
    expect(slow.looks).toBe(3);
    queue(slow, 2_000);
    guard.sweep();
    expect(slow.closedWith?.code).toBe(CloseCode.slowConsumer);
    expect(cuts).toEqual([2_100]);
    expect(guard.size).toEqual({ sockets: 7, backlogged: 0 });

    const other = conns[1] as CountingConnection;
    queue(other, 100);
    for (let sweep = 0; sweep < 4; sweep++) guard.sweep();
    expect(guard.size.backlogged).toBe(1);
    other.drain();
    const looks = other.looks;
    guard.sweep();
    expect(guard.size.backlogged).toBe(0);
    guard.sweep();
    expect(other.looks).toBe(looks + 1);
    guard.close();
  });

  it('lets go of sockets that closed or were deleted, and visits ones added mid-round', () => {
    const guard = guardOf();
    const a = new FakeConnection();
    const b = new FakeConnection();
    guard.add(a);
    guard.add(b);
    queue(b, 10);
    guard.sweep();
    b.disconnect();
    guard.delete(a);
    guard.sweep();
    expect(guard.size).toEqual({ sockets: 0, backlogged: 0 });
    // Four sockets, four slots: one visit per sweep, each socket once per round.
    const late = Array.from({ length: 4 }, () => new CountingConnection());
    for (const c of late) guard.add(c);
    for (let sweep = 0; sweep < 4; sweep++) guard.sweep();
    expect(late.map((c) => c.looks)).toEqual([1, 1, 1, 1]);
    guard.close();
  });
});

describe('SlowConsumerGuard on its timer', () => {
  const timed = (clock: ManualClock) =>
    new SlowConsumerGuard({ maxBufferedBytes: 1_000, checkIntervalMs: 100, slots: 4, onCut: () => undefined, clock });

  it('wakes once a round while no socket has a backlog, and looks at each socket once in it', () => {
    const clock = new ManualClock();
    const guard = timed(clock);
    const conns = Array.from({ length: 8 }, () => new CountingConnection());
    for (const c of conns) guard.add(c);
    clock.advanceSync(399);
    expect(conns.every((c) => c.looks === 0)).toBe(true);
    clock.advanceSync(1);
    expect(conns.every((c) => c.looks === 1)).toBe(true);
    expect(clock.pending).toBe(1);
    guard.close();
    expect(clock.pending).toBe(0);
  });

  it('sweeps every interval again once a backlog is seen, and waits a round once it drained', () => {
    const clock = new ManualClock();
    const guard = timed(clock);
    const conns = Array.from({ length: 4 }, () => new CountingConnection());
    for (const c of conns) guard.add(c);
    const slow = conns[2] as CountingConnection;
    queue(slow, 500);
    clock.advanceSync(400);
    expect(guard.size.backlogged).toBe(1);
    const before = slow.looks;
    clock.advanceSync(100);
    expect(slow.looks).toBe(before + 1);
    slow.drain();
    clock.advanceSync(100);
    expect(guard.size.backlogged).toBe(0);
    const quiet = conns.map((c) => c.looks);
    clock.advanceSync(399);
    expect(conns.map((c) => c.looks)).toEqual(quiet);
    clock.advanceSync(1);
    expect(conns.map((c, i) => c.looks - (quiet[i] ?? 0))).toEqual([1, 1, 1, 1]);
    guard.close();
  });
});
