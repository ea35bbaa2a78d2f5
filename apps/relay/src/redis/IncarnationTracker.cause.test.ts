import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { IncarnationTracker } from './IncarnationTracker.js';
import type { KeySighting } from './KeySighting.js';
import type { StreamResetCause } from './StreamResetCause.js';
import { waitFor } from '@streamgate/testkit';
import { ManualClock } from '@streamgate/protocol/testing';

/** Sightings the test sets per key; the causes the tracker reports, in order. */
function harness() {
  const sightings = new Map<StreamName, KeySighting>();
  const cursors = new Map<StreamName, StreamId>();
  const resets: Array<[StreamName, StreamResetCause]> = [];
  const tracker = new IncarnationTracker({
    probe: (keys) => Promise.resolve(keys.map((k) => sightings.get(k) ?? { exists: false as const })),
    clock: new ManualClock(),
    cursorOf: (s) => cursors.get(s),
    onNewIncarnation: (s, cause) => {
      resets.push([s, cause]);
      cursors.set(s, '0-0');
    },
    onError: () => undefined,
    onCheck: () => undefined,
  });
  const watch = (s: StreamName, at: StreamId, sighting: KeySighting): void => {
    cursors.set(s, at);
    sightings.set(s, sighting);
    tracker.track(s);
  };
  return { sightings, resets, tracker, watch };
}

/** A stream whose entries 1-0 … last-0 are stored from `first` on, and the reader's entry `stored` or not. */
const present = (last: number, entriesAdded: number, cursorStored: boolean, first = '1-0'): KeySighting => ({
  exists: true,
  lastGeneratedId: `${last}-0`,
  entriesAdded,
  cursorStored,
  firstEntryId: first,
  maxDeletedEntryId: '0-0',
});

describe('IncarnationTracker reset causes', () => {
  it('names a deleted and recreated key recreated, and a delivered entry gone after a failover lost_in_failover', async () => {
    const h = harness();
    h.watch('recreated', '5-0', present(5, 5, true));
    h.watch('failed-over', '5-0', present(5, 5, true));
    h.watch('vanished', '5-0', present(5, 5, true));
    await h.tracker.checkNext();
    expect(h.resets).toEqual([]);

    // Recreated with lower ids (so the reader's entry is missing too: the recreation explains it).
    h.sightings.set('recreated', present(2, 2, false));
    // A promoted replica that had copied 1-0…3-0, then took new writes past the old position.
    h.sightings.set('failed-over', present(9, 6, false));
    h.sightings.set('vanished', { exists: false });
    await h.tracker.checkNext();
    expect(h.resets).toEqual([
      ['recreated', 'recreated'],
      ['failed-over', 'lost_in_failover'],
    ]);

    // Back after being seen missing: recreated, whatever else the sighting shows.
    h.sightings.set('vanished', present(9, 9, false));
    await h.tracker.checkNext();
    expect(h.resets.at(-1)).toEqual(['vanished', 'recreated']);
    h.tracker.close();
  });

  it('names ids fallen below the position lost_in_failover when a connection loss left a witness: the replica promoted before new writes overtook the lost ones', async () => {
    const h = harness();
    h.watch('early', '5-0', present(5, 5, true));
    await h.tracker.checkNext();
    // The replica had copied 1-0…3-0 and nothing has been written to it yet.
    h.sightings.set('early', present(3, 3, false));
    h.tracker.suspectLoss();
    await waitFor(() => h.resets.length > 0, { timeoutMs: 5_000, message: 'the look after the suspected loss never reported' });
    expect(h.resets).toEqual([['early', 'lost_in_failover']]);
    h.tracker.close();
  });
});
