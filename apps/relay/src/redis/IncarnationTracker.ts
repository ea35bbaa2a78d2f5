import { compareStreamIds, STREAM_START } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { IncarnationMark } from './parseReplies.js';
import type { StreamResetCause } from './StreamResetCause.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import { toError } from './redisFailure.js';

/**
 * What one check of a key found: missing, or present with its mark and (from the periodic
 * check) a look at the reader's position; null when the check failed for it.
 */
export type KeySighting = { readonly exists: false } | ({ readonly exists: true } & IncarnationMark & Partial<CursorLook>);

/**
 * Whether the entry at the reader's position is still stored, with what tells a loss from a
 * trim (the first entry moved past it) or an XDEL (max-deleted-entry-id reached it). Asked
 * BEFORE the XINFO that gives the other two: both only move forward in one incarnation, so an
 * entry removed by either before the look shows as removed that way in the XINFO after it.
 */
export interface CursorLook {
  /** The entry asked about (CheckSnapshot.probe) is stored. */
  readonly cursorStored: boolean;
  /** Null for an empty stream. */
  readonly firstEntryId: StreamId | null;
  /** Null before Redis 7, which does not report it: an XDEL cannot be ruled out. */
  readonly maxDeletedEntryId: StreamId | null;
}

/**
 * Checks keys on the command connection: per key EXISTS, `XRANGE key id id` (`ids[i]`, an entry
 * the reader read: CheckSnapshot.probe), then XINFO STREAM, pipelined.
 */
export type IncarnationProbe = (keys: readonly StreamName[], ids: readonly StreamId[]) => Promise<ReadonlyArray<KeySighting | null>>;

/** Taken when a check is sent; a reply whose snapshot is stale (the key was restarted since) is ignored. */
export interface CheckSnapshot {
  readonly cursor: StreamId;
  readonly epoch: number;
  /** The read entry whose presence the check asks about: the key's witness, else the cursor. */
  readonly probe: StreamId;
  /** Order of sending: replies to checks of one key may come back out of order (a cluster node slow to answer). */
  readonly seq: number;
}

export interface IncarnationTrackerOptions {
  readonly probe: IncarnationProbe;
  readonly clock: Clock;
  /** The reader's position for a watched key. */
  readonly cursorOf: (stream: StreamName) => StreamId | undefined;
  /** A new incarnation was seen: move the read position to its start and tell the listener. */
  readonly onNewIncarnation: (stream: StreamName, cause: StreamResetCause) => void;
  readonly onError: (error: Error) => void;
  readonly onCheck: (keys: number) => void;
  /** Pause between two checks. Default 1 000 ms. */
  readonly intervalMs?: number;
  /** Keys per check (one pipeline). Default 1 000. */
  readonly groupSize?: number;
}

interface KeyState {
  /** The key was seen present, or the reader had a position in it. */
  existed: boolean;
  /** Seen missing after it existed: the next sighting of it present is a new incarnation. */
  vanished: boolean;
  entriesAdded: number | null;
  epoch: number;
  /**
   * The read position when the server behind the key may have changed (suspectLoss), kept
   * until a check has looked at its entry: the reader goes on to read the new server's writes,
   * and the entries lost are the ones just before its position at the change.
   */
  witness: StreamId | null;
  /** The `seq` of the latest sighting taken into account: an older one describes the key as it was before. */
  seen: number;
}

/**
 * Notices that a watched key holds a new incarnation. A reader positioned above the new, lower
 * ids reads nothing from it, so nothing in the live reads shows it: the key has to be looked at.
 * Every `intervalMs` one pipelined check of `groupSize` keys (EXISTS, XRANGE of one read entry, XINFO STREAM each) goes
 * round the watched keys (keys seen missing take up to half of each group), so Redis sees at most `groupSize` checks per
 * interval whatever the number of streams, and each key is looked at within
 * ceil(keys / groupSize) intervals (twice that while many keys are missing). Other reads that return a key's metadata (a resume's inspect,
 * a catch-up page) are sightings too and act at once.
 */
export class IncarnationTracker {
  private readonly states = new Map<StreamName, KeyState>();
  private order: IterableIterator<StreamName> = this.states.keys();
  private running = true;
  private readonly stopped: Promise<void>;
  private wakeStop: () => void = () => undefined;
  /** Keys a hint (a keyspace event) asked to look at out of turn, and whether a look is out. */
  private readonly soon = new Set<StreamName>();
  private soonRunning = false;
  /** Snapshots taken so far: their order of sending. */
  private sent = 0;
  /** When suspectLoss last sent its keys to be looked at out of turn. */
  private suspectedAt = -Infinity;

  constructor(private readonly options: IncarnationTrackerOptions) {
    this.stopped = new Promise((resolve) => (this.wakeStop = resolve));
    void this.loop();
  }

  track(stream: StreamName): void {
    if (this.states.has(stream)) return;
    const cursor = this.options.cursorOf(stream) ?? STREAM_START;
    this.states.set(stream, {
      existed: compareStreamIds(cursor, STREAM_START) > 0,
      vanished: false,
      entriesAdded: null,
      epoch: 0,
      witness: null,
      seen: 0,
    });
  }

  untrack(stream: StreamName): void {
    this.states.delete(stream);
  }

  /** Call before sending a read whose reply will be a sighting; undefined for a key not watched. */
  snapshot(stream: StreamName): CheckSnapshot | undefined {
    const state = this.states.get(stream);
    const cursor = this.options.cursorOf(stream);
    if (state === undefined || cursor === undefined) return undefined;
    return { cursor, epoch: state.epoch, probe: state.witness ?? cursor, seq: ++this.sent };
  }

  /** What a read of the key found, against the reader's position when it was sent. */
  observe(stream: StreamName, snapshot: CheckSnapshot, sighting: KeySighting): void {
    const state = this.states.get(stream);
    if (state === undefined || state.epoch !== snapshot.epoch || snapshot.seq < state.seen) return;
    state.seen = snapshot.seq;
    if (!sighting.exists) {
      if (state.existed) state.vanished = true;
      return;
    }
    // In one incarnation the last id never falls below an id read from it, and entries-added
    // never falls; the read position was at most the last id when the check was sent. Nor does
    // an entry the reader read leave it but by a trim or an XDEL.
    const fell =
      compareStreamIds(sighting.lastGeneratedId, snapshot.cursor) < 0 ||
      (sighting.entriesAdded !== null && state.entriesAdded !== null && sighting.entriesAdded < state.entriesAdded);
    // A key seen missing was recreated. Ids or entries-added that fell, while a witness says the
    // server may have changed, are a promoted replica without the last entries (until new writes
    // overtake them); otherwise a recreation, which also explains a missing read entry.
    const cause = resetCause(state.vanished, fell, state.witness !== null, lostAt(snapshot.probe, sighting));
    // A look at the witness's entry settles it, either way; a sighting without one (a resume's inspect) does not.
    if (sighting.cursorStored !== undefined && state.witness === snapshot.probe) state.witness = null;
    state.existed = true;
    state.vanished = false;
    if (sighting.entriesAdded !== null) state.entriesAdded = sighting.entriesAdded;
    if (cause === null) return;
    state.epoch++;
    state.witness = null;
    this.options.onNewIncarnation(stream, cause);
  }

  /**
   * Looks at this key now, out of turn: a notification said it was deleted or renamed, or woke a
   * read that found nothing after the cursor. Hints arriving while a look is out share the next.
   */
  checkSoon(stream: StreamName): void {
    if (!this.states.has(stream)) return;
    this.soon.add(stream);
    if (!this.soonRunning) void this.checkHinted();
  }

  /**
   * The server behind the keys may have changed under the reader: a connection to it was lost,
   * a cluster slot's primary was replaced by failover, a replica was promoted by hand. What
   * asynchronous replication had not copied is gone, and those are the entries just before each
   * read position now. Each key's position is kept as its witness (unless one is pending: the
   * first one taken after the change is the last read from the old server) and looked at soon;
   * until a look succeeds the key goes first in every periodic check. Call it as soon as the
   * loss is seen, before the reader reads from the new server. Calls are cheap to repeat (one
   * per connection error is fine): the out-of-turn look runs at most once per interval.
   */
  suspectLoss(): void {
    const witnessed: StreamName[] = [];
    for (const [stream, state] of this.states) {
      const cursor = this.options.cursorOf(stream);
      if (state.witness === null && cursor !== undefined && compareStreamIds(cursor, STREAM_START) > 0) state.witness = cursor;
      if (state.witness !== null) witnessed.push(stream);
    }
    const now = this.options.clock.now();
    if (witnessed.length === 0 || now - this.suspectedAt < (this.options.intervalMs ?? 1_000)) return;
    this.suspectedAt = now;
    for (const stream of witnessed) this.soon.add(stream);
    if (!this.soonRunning) void this.checkHinted();
  }

  /** One check of the next group of keys. */
  async checkNext(): Promise<void> {
    await this.checkKeys(this.nextGroup());
  }

  private async checkHinted(): Promise<void> {
    this.soonRunning = true;
    while (this.running && this.soon.size > 0) {
      const keys = [...this.soon].slice(0, this.options.groupSize ?? 1_000);
      for (const key of keys) this.soon.delete(key);
      await this.checkKeys(keys);
    }
    this.soonRunning = false;
  }

  private async checkKeys(keys: readonly StreamName[]): Promise<void> {
    if (keys.length === 0) return;
    const snapshots = keys.map((k) => this.snapshot(k));
    this.options.onCheck(keys.length);
    let sightings: ReadonlyArray<KeySighting | null>;
    try {
      sightings = await this.options.probe(
        keys,
        snapshots.map((s) => s?.probe ?? STREAM_START),
      );
    } catch (thrown) {
      this.options.onError(toError(thrown));
      return;
    }
    keys.forEach((key, i) => {
      const sighting = sightings[i];
      const snapshot = snapshots[i];
      if (sighting !== null && sighting !== undefined && snapshot !== undefined) this.observe(key, snapshot, sighting);
    });
  }

  close(): void {
    this.running = false;
    this.wakeStop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await Promise.race([sleepOn(this.options.clock, this.options.intervalMs ?? 1_000), this.stopped]);
      if (this.running) await this.checkNext();
    }
  }

  /**
   * Keys seen missing first (they are the ones about to come back), and keys with a witness not
   * looked at yet, up to half the group so that they cannot starve the others, then round the rest.
   */
  private nextGroup(): StreamName[] {
    const size = this.options.groupSize ?? 1_000;
    const group = new Set<StreamName>();
    for (const [key, state] of this.states) {
      if (group.size >= Math.ceil(size / 2)) break;
      if (state.vanished || state.witness !== null) group.add(key);
    }
    let wrapped = false;
    while (group.size < Math.min(size, this.states.size)) {
      const next = this.order.next();
      if (next.done === true) {
        if (wrapped) break;
        wrapped = true;
        this.order = this.states.keys();
        continue;
      }
      group.add(next.value);
    }
    return [...group];
  }
}

function resetCause(vanished: boolean, fell: boolean, witnessed: boolean, lost: boolean): StreamResetCause | null {
  if (vanished) return 'recreated';
  if (fell) return witnessed ? 'lost_in_failover' : 'recreated';
  return lost ? 'lost_in_failover' : null;
}

/**
 * An entry the reader read (`id`) is gone although it was neither trimmed (it is not below the
 * first entry) nor deleted with XDEL (it is above max-deleted-entry-id): the stream lost
 * entries the reader delivered. That is what a failover to a replica that had not yet copied
 * them leaves, even once new writes have taken the last id above the position again.
 */
function lostAt(id: StreamId, sighting: Partial<CursorLook>): boolean {
  if (sighting.cursorStored !== false || compareStreamIds(id, STREAM_START) <= 0) return false;
  const { firstEntryId, maxDeletedEntryId } = sighting;
  if (firstEntryId === null || firstEntryId === undefined || maxDeletedEntryId === null || maxDeletedEntryId === undefined) return false;
  return compareStreamIds(id, firstEntryId) >= 0 && compareStreamIds(id, maxDeletedEntryId) > 0;
}
