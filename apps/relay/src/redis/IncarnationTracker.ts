import { compareStreamIds, STREAM_START } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { CheckSnapshot, IncarnationProbe, KeySighting } from './KeySighting.js';
import type { StreamResetCause } from './StreamResetCause.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import { toError } from './redisFailure.js';
import { judgeSighting } from './judgeSighting.js';
import type { KeyState } from './judgeSighting.js';

export interface IncarnationTrackerOptions {
  readonly probe: IncarnationProbe;
  readonly clock: Clock;
  /** The reader's position for a watched key. */
  readonly cursorOf: (stream: StreamName) => StreamId | undefined;
  /** A new incarnation was seen: move the read position to its start and tell the listener. */
  readonly onNewIncarnation: (stream: StreamName, cause: StreamResetCause) => void;
  readonly onError: (error: Error) => void;
  readonly onCheck: (keys: number) => void;
  /** Pause between two periodic checks. Default 1 000 ms. */
  readonly intervalMs?: number;
  /** Keys per check (one pipeline) at most. Default 1 000. */
  readonly groupSize?: number;
  /**
   * Keys in the next periodic check (at most groupSize), asked each time: the safety net can be
   * thinner while other signals (keyspace events, live messages) report recreations. Default groupSize.
   */
  readonly periodicGroupSize?: () => number;
  /**
   * A round of all keys takes at least this many periodic checks: each key is looked at no more
   * often than once per this many intervals, however few keys there are. Default 1.
   */
  readonly slicesPerRound?: number;
  /** suspectLoss sends its keys out of turn at most this often. Default intervalMs. */
  readonly suspectIntervalMs?: number;
}

/**
 * Notices that a watched key holds a new incarnation. A reader positioned above the new, lower
 * ids reads nothing from it, so nothing in the live reads shows it: the key has to be looked at.
 * Every `intervalMs` one check of `periodicGroupSize()` keys (whether each exists, still stores one read entry, and
 * its XINFO STREAM marks: redisIncarnationProbe) goes round the watched keys (keys seen missing take up to half of each group), so Redis sees at most that many
 * checks per interval whatever the number of streams, and each key is looked at within ceil(keys / group) intervals
 * (twice that while many keys are missing). Hints (checkSoon, suspectLoss) look out of turn. Other reads that return a
 * key's metadata (a resume's inspect, a catch-up page) are sightings too and act at once.
 */
export class IncarnationTracker {
  private readonly states = new Map<StreamName, KeyState>();
  /** The watched keys seen missing or holding a witness: they go first in a periodic check. */
  private readonly first = new Set<StreamName>();
  private order: IterableIterator<StreamName> = this.states.keys();
  private running = true;
  private readonly stopped: Promise<void>;
  private wakeStop: () => void = () => undefined;
  /** Keys a hint (a keyspace event) asked to look at out of turn, and whether a look is out. */
  private readonly soon = new Set<StreamName>();
  private soonRunning = false;
  /** Snapshots taken so far: their order of sending. */
  private sent = 0;
  /** Keys due in the periodic round, in slices (1/slicesPerRound of a key) not yet sent. */
  private due = 0;
  /** When suspectLoss last sent its keys to be looked at out of turn. */
  private suspectedAt = -Infinity;
  /** Ends the periodic loop's wait for a whole round, while it waits for one. */
  private wakeRound: (() => void) | null = null;

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
    this.first.delete(stream);
  }

  /**
   * A look found the key missing after it existed: whatever it holds next is a new incarnation,
   * which the next look that finds it present reports (onNewIncarnation).
   */
  vanished(stream: StreamName): boolean {
    return this.states.get(stream)?.vanished === true;
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
    const cause = judgeSighting(state, snapshot, sighting);
    if (cause !== null) {
      state.epoch++;
      state.witness = null;
    }
    this.placeFirst(stream, state);
    if (cause !== null) this.options.onNewIncarnation(stream, cause);
  }

  /** Keeps `first` exact, so picking a check's first keys costs what they number, not what the watched keys do. */
  private placeFirst(stream: StreamName, state: KeyState): void {
    if (state.vanished || state.witness !== null) {
      this.first.add(stream);
      this.wakeRound?.();
    } else this.first.delete(stream);
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
      this.placeFirst(stream, state);
    }
    const now = this.options.clock.now();
    if (witnessed.length === 0 || now - this.suspectedAt < (this.options.suspectIntervalMs ?? this.options.intervalMs ?? 1_000)) return;
    this.suspectedAt = now;
    for (const stream of witnessed) this.soon.add(stream);
    if (!this.soonRunning) void this.checkHinted();
  }

  /** One check of the next group of keys: `slices` periodic checks' worth (default one). */
  async checkNext(slices = 1): Promise<void> {
    await this.checkKeys(this.nextGroup(slices));
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

  /**
   * While no key is seen missing or holds a witness, a whole round's slices go in one check, one
   * interval × slicesPerRound apart: the same keys a second, one wake-up of the event loop instead
   * of slicesPerRound (each costs the pod more than the check's few fields per key). Keys that do
   * go first are looked at every interval, as before.
   */
  private async loop(): Promise<void> {
    const slices = Math.max(1, Math.floor(this.options.slicesPerRound ?? 1));
    const interval = this.options.intervalMs ?? 1_000;
    const clock = this.options.clock;
    while (this.running) {
      const batch = this.first.size > 0 ? 1 : slices;
      const from = clock.now();
      const woken = new AbortController();
      // A key going first (a hint found it missing) ends a round's long wait at once.
      if (batch > 1) this.wakeRound = () => woken.abort();
      await Promise.race([sleepOn(clock, interval * batch, woken.signal), this.stopped]);
      this.wakeRound = null;
      // Woken early: the slices waited through so far go in this check, so the round keeps its pace.
      if (this.running) await this.checkNext(Math.max(1, Math.min(batch, Math.floor((clock.now() - from) / interval))));
    }
  }

  /**
   * Keys seen missing first (they are the ones about to come back), and keys with a witness not
   * looked at yet, up to half the group so that they cannot starve the others, then round the rest.
   */
  private nextGroup(batch: number): StreamName[] {
    const most = this.options.groupSize ?? 1_000;
    const cap = Math.max(1, Math.min(most, this.options.periodicGroupSize?.() ?? most));
    // A round takes at least slicesPerRound checks: each adds keys/slices to the keys due, in
    // whole slices (1/slices of a key), so a pod with fewer keys than slices does not look at
    // each key more than once a round. A check standing for `batch` of them adds up theirs.
    const slices = this.options.slicesPerRound ?? 1;
    let size = 0;
    for (let i = 0; i < batch; i++) {
      this.due = Math.min(cap * slices, this.due + this.states.size);
      const share = Math.floor(this.due / slices);
      this.due -= share * slices;
      size += share;
    }
    const group = new Set<StreamName>();
    for (const key of this.first) {
      if (group.size >= Math.ceil(cap / 2)) break;
      group.add(key);
    }
    // The round moves on by at least one key when one is due, however many went first.
    let picked = 0;
    let wrapped = false;
    while ((group.size < size || picked < Math.min(1, size)) && picked < this.states.size) {
      const next = this.order.next();
      if (next.done === true) {
        if (wrapped) break;
        wrapped = true;
        this.order = this.states.keys();
        continue;
      }
      picked++;
      group.add(next.value);
    }
    return [...group];
  }
}
