import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { IncarnationTracker } from './IncarnationTracker.js';
import type { KeySighting } from './KeySighting.js';
import { ManualClock, settle } from '@streamgate/protocol/testing';

/** A keyspace the test edits, and the reader positions the tracker compares it with. */
function harness(
  groupSize = 1_000,
  pacing: { periodicGroupSize?: () => number; suspectIntervalMs?: number; intervalMs?: number; slicesPerRound?: number } = {},
) {
  const keys = new Map<StreamName, KeySighting>();
  const cursors = new Map<StreamName, StreamId>();
  const checked: Array<readonly StreamName[]> = [];
  const recreated: StreamName[] = [];
  let hold: Promise<void> | null = null;
  const clock = new ManualClock();
  const tracker = new IncarnationTracker({
    probe: async (asked) => {
      checked.push(asked);
      const answer = asked.map((k) => keys.get(k) ?? { exists: false as const });
      if (hold !== null) await hold;
      return answer;
    },
    clock,
    cursorOf: (s) => cursors.get(s),
    onNewIncarnation: (s) => {
      recreated.push(s);
      cursors.set(s, '0-0');
    },
    onError: () => undefined,
    onCheck: () => undefined,
    groupSize,
    ...pacing,
  });
  const watch = (s: StreamName, at: StreamId): void => {
    cursors.set(s, at);
    tracker.track(s);
  };
  const stream = (lastGeneratedId: StreamId, entriesAdded: number | null): KeySighting => ({ exists: true, lastGeneratedId, entriesAdded });
  const holdProbe = (): (() => void) => {
    let release: () => void = () => undefined;
    hold = new Promise((resolve) => (release = resolve));
    return () => {
      hold = null;
      release();
    };
  };
  return { keys, cursors, checked, recreated, tracker, clock, watch, stream, holdProbe };
}

describe('IncarnationTracker', () => {
  it('sees ids going below the read position as a new incarnation, once', async () => {
    const h = harness();
    h.watch('a', '1700000000000-5');
    h.keys.set('a', h.stream('1700000000000-5', 6));
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    h.keys.set('a', h.stream('1-3', 3));
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('sees entries-added falling as a new incarnation even when the new ids are higher', async () => {
    const h = harness();
    h.watch('a', '10-0');
    h.keys.set('a', h.stream('10-0', 10));
    await h.tracker.checkNext();
    h.keys.set('a', h.stream('20-0', 4));
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('does not take a shrinking length for a new key on a server that does not count entries-added', async () => {
    const h = harness();
    h.watch('a', '10-0');
    h.keys.set('a', h.stream('10-0', null));
    await h.tracker.checkNext();
    h.keys.set('a', h.stream('11-0', null));
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    h.tracker.close();
  });

  it('sees a key that vanished and came back as a new incarnation, but not the first creation of a key that never existed', async () => {
    const h = harness();
    h.watch('gone', '5-0');
    h.watch('unborn', '0-0');
    h.keys.set('gone', h.stream('5-0', 5));
    await h.tracker.checkNext();
    h.keys.delete('gone');
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    h.keys.set('gone', h.stream('1700000000000-0', 1));
    h.keys.set('unborn', h.stream('1700000000000-0', 1));
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['gone']);
    h.tracker.close();
  });

  it('judges a check against the position when it was sent: a reader that moved on, or a key restarted meanwhile, is no evidence', async () => {
    const h = harness();
    h.watch('a', '5-0');
    h.keys.set('a', h.stream('5-0', 5));
    const release = h.holdProbe();
    const check = h.tracker.checkNext();
    await settle();
    // Entries written after the check ran were read before its reply came back.
    h.cursors.set('a', '7-0');
    release();
    await check;
    expect(h.recreated).toEqual([]);
    // A sighting taken before a restart is about the old incarnation.
    h.keys.set('a', h.stream('1-1', 1));
    const before = h.tracker.snapshot('a');
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    if (before === undefined) throw new Error('watched key without a snapshot');
    h.tracker.observe('a', before, h.stream('1-1', 1));
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('checks at most one group per interval, goes round every key, and puts keys seen missing first (up to half a group)', async () => {
    const h = harness(1_000);
    for (let i = 0; i < 2_500; i++) {
      h.watch(`s${i}`, '1-0');
      h.keys.set(`s${i}`, h.stream('1-0', 1));
    }
    await h.clock.advance(999);
    expect(h.checked).toHaveLength(0);
    await h.clock.advance(1);
    await h.clock.advance(1_000);
    await h.clock.advance(1_000);
    expect(h.checked.map((c) => c.length)).toEqual([1_000, 1_000, 1_000]);
    // Three checks covered all 2,500 keys (the third wrapped round to the start).
    expect(new Set(h.checked.flat()).size).toBe(2_500);
    for (let i = 0; i < 800; i++) h.keys.delete(`s${i}`);
    await h.clock.advance(1_000); // sees s500..s1499 (s500..s799 missing)
    await h.clock.advance(1_000);
    const last = h.checked.at(-1) ?? [];
    expect(last).toHaveLength(1_000);
    expect(last.slice(0, 300)).toEqual(Array.from({ length: 300 }, (_, i) => `s${500 + i}`));
    h.tracker.close();
    await h.clock.advance(5_000);
    expect(h.checked).toHaveLength(5);
  });

  it('sizes each periodic check as asked at that moment, within groupSize, and rate-limits suspectLoss apart', async () => {
    let size = 10;
    const h = harness(100, { periodicGroupSize: () => size, suspectIntervalMs: 1_000, intervalMs: 100 });
    for (let i = 0; i < 50; i++) {
      h.watch(`s${i}`, '1-0');
      h.keys.set(`s${i}`, h.stream('1-0', 1));
    }
    await h.clock.advance(100);
    await h.clock.advance(100);
    expect(h.checked.map((c) => c.length)).toEqual([10, 10]);
    size = 1_000;
    await h.clock.advance(100);
    expect(h.checked.map((c) => c.length)).toEqual([10, 10, 50]);
    size = 10;
    // Every key is witnessed and sent at once; a second loss within suspectIntervalMs (though
    // past intervalMs) sends none out of turn.
    h.tracker.suspectLoss();
    await settle();
    expect(h.checked.at(-1)).toHaveLength(50);
    await h.clock.advance(500);
    expect(h.checked.slice(-5).map((c) => c.length)).toEqual([10, 10, 10, 10, 10]);
    const sent = h.checked.length;
    h.tracker.suspectLoss();
    await settle();
    expect(h.checked).toHaveLength(sent);
    h.tracker.close();
  });

  it('sends a round of slices as one check while no key goes first, and a slice each interval while one does', async () => {
    const h = harness(1_000, { periodicGroupSize: () => 10, slicesPerRound: 10, intervalMs: 100 });
    for (let i = 0; i < 10; i++) {
      h.watch(`s${i}`, '1-0');
      h.keys.set(`s${i}`, h.stream('1-0', 1));
    }
    for (let i = 0; i < 10; i++) await h.clock.advance(100);
    // Ten slices of one key in one check, a second after the start: each key once a round, one wake-up.
    expect(h.checked).toEqual([Array.from({ length: 10 }, (_, i) => `s${i}`)]);
    h.keys.delete('s0');
    for (let i = 0; i < 10; i++) await h.clock.advance(100); // the next round sees s0 missing
    expect(h.checked).toHaveLength(2);
    // From then on a check every interval, s0 first in each, the round moving on by its slice.
    for (let i = 0; i < 4; i++) await h.clock.advance(100);
    expect(h.checked.slice(2)).toEqual([['s0'], ['s0', 's1'], ['s0', 's2'], ['s0', 's3']]);
    // s0 comes back: seen within one interval, and the round goes back to one check a second.
    h.keys.set('s0', h.stream('1-0', 1));
    await h.clock.advance(100);
    expect(h.checked).toHaveLength(7);
    for (let i = 0; i < 9; i++) await h.clock.advance(100);
    expect(h.checked).toHaveLength(7);
    await h.clock.advance(100);
    expect(h.checked).toHaveLength(8);
    h.tracker.close();
  });

  it("a key a hint finds missing mid-round ends the round's wait: its return is seen within a slice", async () => {
    const h = harness(1_000, { periodicGroupSize: () => 10, slicesPerRound: 10, intervalMs: 100 });
    for (let i = 0; i < 10; i++) {
      h.watch(`s${i}`, '1-0');
      h.keys.set(`s${i}`, h.stream('1-0', 1));
    }
    await h.clock.advance(300); // 300 ms into a round's one-second wait
    h.keys.delete('s4');
    h.tracker.checkSoon('s4');
    await settle();
    // The hinted look, then at once the round's wait ends: the three slices waited through go out, s4 first.
    expect(h.checked).toEqual([['s4'], ['s4', 's0', 's1']]);
    h.keys.set('s4', h.stream('1-0', 1));
    await h.clock.advance(100);
    expect(h.checked).toHaveLength(3);
    expect(h.checked[2]?.[0]).toBe('s4');
    h.tracker.close();
  });

  it('with fewer keys than slices, looks at each key once a round, not once a check', async () => {
    const h = harness(1_000, { periodicGroupSize: () => 10, slicesPerRound: 10, intervalMs: 100 });
    h.watch('a', '1-0');
    h.watch('b', '1-0');
    h.watch('c', '1-0');
    for (const k of ['a', 'b', 'c']) h.keys.set(k, h.stream('1-0', 1));
    for (let i = 0; i < 20; i++) await h.clock.advance(100);
    // Three keys over ten checks: six looks in two rounds, each key twice.
    expect(h.checked.flat().sort()).toEqual(['a', 'a', 'b', 'b', 'c', 'c']);
    h.tracker.close();
  });
});
