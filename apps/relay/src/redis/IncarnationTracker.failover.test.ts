import { describe, expect, it } from 'vitest';
import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { IncarnationTracker } from './IncarnationTracker.js';
import type { KeySighting } from './KeySighting.js';
import { ManualClock, settle } from '@streamgate/protocol/testing';

/** One stream as a server holds it: what the probe's EXISTS + XRANGE cursor cursor + XINFO STREAM answer. */
class FakeStream {
  ids: StreamId[] = [];
  lastGeneratedId: StreamId = '0-0';
  entriesAdded = 0;
  maxDeletedEntryId: StreamId | null = '0-0';

  add(...ids: StreamId[]): this {
    for (const id of ids) {
      this.ids.push(id);
      this.lastGeneratedId = id;
      this.entriesAdded++;
    }
    return this;
  }
  /** XTRIM: the oldest entries go; max-deleted-entry-id does not move. */
  trim(keep: number): void {
    this.ids = this.ids.slice(-keep);
  }
  xdel(id: StreamId): void {
    this.ids = this.ids.filter((i) => i !== id);
    if (this.maxDeletedEntryId !== null && compareStreamIds(id, this.maxDeletedEntryId) > 0) this.maxDeletedEntryId = id;
  }
  /** A replica that had copied the first `kept` entries, promoted. */
  promotedReplica(kept: number): FakeStream {
    const replica = new FakeStream();
    replica.maxDeletedEntryId = this.maxDeletedEntryId;
    replica.add(...this.ids.slice(0, kept));
    return replica;
  }
  sighting(cursor: StreamId): KeySighting {
    return {
      exists: true,
      lastGeneratedId: this.lastGeneratedId,
      entriesAdded: this.entriesAdded,
      cursorStored: this.ids.includes(cursor),
      firstEntryId: this.ids[0] ?? null,
      maxDeletedEntryId: this.maxDeletedEntryId,
    };
  }
}

function harness() {
  const server = new Map<StreamName, FakeStream>();
  const cursors = new Map<StreamName, StreamId>();
  const checked: StreamName[][] = [];
  const recreated: StreamName[] = [];
  /** The server cannot answer: every look fails for every key. */
  const link = { down: false };
  const tracker = new IncarnationTracker({
    probe: (keys, asked) => {
      checked.push([...keys]);
      if (link.down) return Promise.resolve(keys.map(() => null));
      return Promise.resolve(keys.map((k, i) => server.get(k)?.sighting(asked[i] ?? '0-0') ?? { exists: false as const }));
    },
    clock: new ManualClock(),
    cursorOf: (s) => cursors.get(s),
    onNewIncarnation: (s) => {
      recreated.push(s);
      cursors.set(s, '0-0');
    },
    onError: () => undefined,
    onCheck: () => undefined,
  });
  const watch = (s: StreamName, stream: FakeStream, at: StreamId): void => {
    server.set(s, stream);
    cursors.set(s, at);
    tracker.track(s);
  };
  return { server, cursors, checked, recreated, tracker, watch, link };
}

describe('IncarnationTracker after a failover', () => {
  it('sees the entry at the read position gone, though new writes took the last id and entries-added above it, as a new incarnation', async () => {
    const h = harness();
    const primary = new FakeStream().add('1-0', '2-0', '3-0', '4-0', '5-0');
    h.watch('a', primary, '5-0');
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    // The replica had 1-0..3-0; the reader had read up to 5-0. New writes after the promotion
    // have higher ids and outnumber the two lost entries.
    const promoted = primary.promotedReplica(3).add('9-0', '10-0', '11-0');
    h.server.set('a', promoted);
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    // Reading again from 0-0 and on to 11-0: the new incarnation is consistent, nothing more to report.
    h.cursors.set('a', '11-0');
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('does not take an entry trimmed away, deleted with XDEL, an emptied stream or an unknown max-deleted-entry-id for a loss', async () => {
    const h = harness();
    const trimmed = new FakeStream().add('1-0', '2-0', '3-0');
    const deleted = new FakeStream().add('1-0', '2-0', '3-0');
    const emptied = new FakeStream().add('1-0', '2-0');
    const old = new FakeStream().add('1-0', '2-0', '3-0');
    old.maxDeletedEntryId = null;
    h.watch('trimmed', trimmed, '2-0');
    h.watch('deleted', deleted, '3-0');
    h.watch('emptied', emptied, '2-0');
    h.watch('old', old, '2-0');
    await h.tracker.checkNext();
    trimmed.trim(1);
    deleted.xdel('3-0');
    emptied.trim(0);
    // Before Redis 7 an XDEL cannot be told from a loss: the signal stays silent.
    old.ids = ['1-0', '3-0'];
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    // A fresh stream's reader at 0-0 has read nothing yet: nothing can have been lost.
    h.watch('fresh', new FakeStream().add('5-0'), '0-0');
    await h.tracker.checkNext();
    expect(h.recreated).toEqual([]);
    h.tracker.close();
  });

  it('checks every watched key at once when told the server may have changed, before the next periodic round', async () => {
    const h = harness();
    const a = new FakeStream().add('1-0', '2-0');
    const b = new FakeStream().add('1-0', '2-0');
    h.watch('a', a, '2-0');
    h.watch('b', b, '2-0');
    h.server.set('a', a.promotedReplica(1).add('7-0'));
    h.tracker.suspectLoss();
    await settle();
    expect(h.checked).toEqual([['a', 'b']]);
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('looks for the position at the change, not the current one, after the reader read on into the new server', async () => {
    const h = harness();
    const primary = new FakeStream().add('1-0', '2-0', '3-0');
    h.watch('a', primary, '3-0');
    const kept = new FakeStream().add('1-0', '2-0', '3-0');
    h.watch('kept', kept, '3-0');
    // The connection is lost: the server cannot answer the look it triggers, nor a periodic one.
    h.link.down = true;
    h.tracker.suspectLoss();
    await settle();
    await h.tracker.checkNext();
    // The replica had 1-0 only; the reader reads the new writes before the next look that works.
    h.link.down = false;
    h.server.set('a', primary.promotedReplica(1).add('8-0', '9-0'));
    kept.add('8-0');
    h.cursors.set('a', '9-0');
    h.cursors.set('kept', '8-0');
    expect(h.recreated).toEqual([]);
    // A second call (the topology change seen later) keeps the witness taken at the loss, and
    // within the interval sends nothing out of turn: the next periodic check takes the witnesses first.
    const checks = h.checked.length;
    h.tracker.suspectLoss();
    await settle();
    expect(h.checked).toHaveLength(checks);
    await h.tracker.checkNext();
    expect(h.recreated).toEqual(['a']);
    // Once looked at, a witness is gone: later checks ask about the position again.
    const asked: string[] = [];
    const look = kept.sighting.bind(kept);
    kept.sighting = (id: StreamId) => {
      asked.push(id);
      return look(id);
    };
    await h.tracker.checkNext();
    expect(asked).toEqual(['8-0']);
    expect(h.recreated).toEqual(['a']);
    h.tracker.close();
  });

  it('ignores a reply that comes back after a newer one for the same key: it describes the key as it was', async () => {
    const replies: Array<(sighting: KeySighting) => void> = [];
    const recreated: StreamName[] = [];
    const tracker = new IncarnationTracker({
      probe: () => new Promise((resolve) => replies.push((sighting) => resolve([sighting]))),
      clock: new ManualClock(),
      cursorOf: () => '5-0',
      onNewIncarnation: (s) => recreated.push(s),
      onError: () => undefined,
      onCheck: () => undefined,
    });
    tracker.track('a');
    // Two looks in flight (a periodic one, and one out of turn), answered newest first.
    const older = tracker.checkNext();
    tracker.checkSoon('a');
    await settle();
    const mark = (lastGeneratedId: StreamId, entriesAdded: number): KeySighting => ({
      exists: true,
      lastGeneratedId,
      entriesAdded,
      cursorStored: true,
      firstEntryId: '1-0',
      maxDeletedEntryId: '0-0',
    });
    replies[1]?.(mark('9-0', 9));
    await settle();
    replies[0]?.(mark('6-0', 6));
    await older;
    expect(recreated).toEqual([]);
    tracker.close();
  });
});
