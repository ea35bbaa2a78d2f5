import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { RangePage, SourceError, SourceListener, SourceResult, StreamEntry, StreamInfo, StreamSource } from '../core/StreamSource.js';

interface StoredStream {
  kind: 'stream';
  /** Which creation of the key this is: a DEL and a later XADD make a new one. */
  readonly incarnation: number;
  readonly entries: StreamEntry[];
  lastGeneratedId: StreamId;
  entriesAdded: number;
  maxDeletedEntryId: StreamId;
}

type StoredKey = StoredStream | { kind: 'other' };

const UNAVAILABLE: SourceError = { code: 'source_unavailable', retryable: true, message: 'memory source is unavailable' };
const WRONG_TYPE: SourceError = { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' };

/**
 * A StreamSource over an in-memory keyspace that behaves as Redis does where the core can tell:
 * `*` ids are `<ms>-<seq>` from the injected clock and always increase, explicit ids must exceed
 * the last generated one, XINFO-like metadata (entries-added, max-deleted-entry-id) survives trims
 * and deletions, and `watch` hands over every entry after the cursor, in order, exactly once, on a
 * later microtask (as a blocking reader would wake up). A test can make it unhealthy (reads fail
 * and live delivery pauses until it is healthy again), fail the next read, or turn a key into
 * another type.
 */
export class MemoryStreamSource implements StreamSource {
  private readonly keys = new Map<StreamName, StoredKey>();
  /** Read position of each watched stream, and the incarnation it belongs to (null: no key when watched). */
  private readonly cursors = new Map<StreamName, { id: StreamId; incarnation: number | null }>();
  private incarnations = 0;
  private listener: SourceListener | null;
  private isHealthy = true;
  private failures: SourceError[] = [];
  private pumpQueued = false;
  private pumped: Promise<void> = Promise.resolve();
  private closed = false;
  /** While set, reads wait for it (holdReads). */
  private gate: Promise<void> | null = null;
  /** Reads answered so far, by kind. */
  readonly reads = { inspect: 0, range: 0 };

  constructor(
    listener: SourceListener | null = null,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.listener = listener;
  }

  /** The listener live entries go to; the hub that owns it is built after the source. */
  attach(listener: SourceListener): void {
    this.listener = listener;
  }

  get healthy(): boolean {
    return this.isHealthy;
  }

  /** Unhealthy: every read fails with source_unavailable and live delivery waits. */
  setHealthy(healthy: boolean): void {
    this.isHealthy = healthy;
    if (healthy) this.schedulePump();
  }

  /** Reads wait until the returned function is called: a Redis that has not answered yet. */
  holdReads(): () => void {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.gate = gate;
    return () => {
      if (this.gate === gate) this.gate = null;
      release();
    };
  }

  /** The next read (inspect or range) fails with `error`. */
  failNextRead(error: SourceError = UNAVAILABLE): void {
    this.failures.push(error);
  }

  /** XADD: appends one entry (`id` omitted: `*`) and returns its id. Throws as Redis refuses. */
  append(stream: StreamName, fields: readonly string[], id?: StreamId): StreamId {
    const key = this.keys.get(stream);
    if (key?.kind === 'other') throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    const s: StoredStream = key ?? {
      kind: 'stream',
      incarnation: ++this.incarnations,
      entries: [],
      lastGeneratedId: '0-0',
      entriesAdded: 0,
      maxDeletedEntryId: '0-0',
    };
    const next = id ?? this.nextId(s.lastGeneratedId);
    if (compareStreamIds(next, s.lastGeneratedId) <= 0) {
      throw new Error('ERR The ID specified in XADD is equal or smaller than the target stream top item');
    }
    s.entries.push({ id: next, fields: [...fields] });
    s.lastGeneratedId = next;
    s.entriesAdded += 1;
    this.keys.set(stream, s);
    this.schedulePump();
    return next;
  }

  /** Appends one entry in the relay's entry format: a `data` field holding `value` as JSON. */
  appendData(stream: StreamName, value: unknown, id?: StreamId): StreamId {
    return this.append(stream, ['data', JSON.stringify(value)], id);
  }

  /** XTRIM MAXLEN = keep. */
  trim(stream: StreamName, keep: number): void {
    const s = this.stream(stream);
    if (s === null) return;
    const removed = s.entries.splice(0, Math.max(0, s.entries.length - keep));
    const last = removed[removed.length - 1];
    if (last !== undefined && compareStreamIds(last.id, s.maxDeletedEntryId) > 0) s.maxDeletedEntryId = last.id;
  }

  /** XDEL. */
  deleteEntry(stream: StreamName, id: StreamId): void {
    const s = this.stream(stream);
    if (s === null) return;
    const at = s.entries.findIndex((e) => e.id === id);
    if (at < 0) return;
    s.entries.splice(at, 1);
    if (compareStreamIds(id, s.maxDeletedEntryId) > 0) s.maxDeletedEntryId = id;
  }

  /**
   * DEL: the key and its metadata are gone; a later append starts a new incarnation, which a
   * watch reports with `reset` before handing over its first entries.
   */
  deleteKey(stream: StreamName): void {
    this.keys.delete(stream);
  }

  /** SET over the key: it now holds another type; a watch of it fails. */
  setWrongType(stream: StreamName): void {
    this.keys.set(stream, { kind: 'other' });
    this.schedulePump();
  }

  /** Entries stored now, oldest first. */
  stored(stream: StreamName): readonly StreamEntry[] {
    return this.stream(stream)?.entries ?? [];
  }

  isWatched(stream: StreamName): boolean {
    return this.cursors.has(stream);
  }

  inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    this.reads.inspect += 1;
    return this.answer(stream, (s) => ({ info: this.info(s), probeExists: probe !== undefined && this.has(s, probe) }));
  }

  range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<RangePage>> {
    this.reads.range += 1;
    return this.answer(stream, (s) => ({
      entries: s === null ? [] : s.entries.filter((e) => compareStreamIds(e.id, after) > 0).slice(0, count),
      info: this.info(s),
      afterExists: this.has(s, after),
    }));
  }

  watch(stream: StreamName, after: StreamId): void {
    if (this.cursors.has(stream)) return;
    this.cursors.set(stream, { id: after, incarnation: this.stream(stream)?.incarnation ?? null });
    this.schedulePump();
  }

  unwatch(stream: StreamName): void {
    this.cursors.delete(stream);
  }

  close(): Promise<void> {
    this.closed = true;
    this.cursors.clear();
    return Promise.resolve();
  }

  /** Resolves once every entry appended so far has been handed to the listener. */
  settled(): Promise<void> {
    return this.pumped;
  }

  private async answer<T>(stream: StreamName, read: (s: StoredStream | null) => T): Promise<SourceResult<T>> {
    // A round trip: the answer comes on a later microtask, so callers see the same interleavings as with Redis.
    await Promise.resolve();
    if (this.gate !== null) await this.gate;
    const failure = this.failures.shift();
    if (failure !== undefined) return { ok: false, error: failure };
    if (!this.isHealthy) return { ok: false, error: UNAVAILABLE };
    const key = this.keys.get(stream);
    if (key?.kind === 'other') return { ok: false, error: WRONG_TYPE };
    return { ok: true, value: read(key ?? null) };
  }

  private stream(name: StreamName): StoredStream | null {
    const key = this.keys.get(name);
    return key?.kind === 'stream' ? key : null;
  }

  private info(s: StoredStream | null): StreamInfo | null {
    if (s === null) return null;
    return {
      lastGeneratedId: s.lastGeneratedId,
      firstEntryId: s.entries[0]?.id ?? null,
      length: s.entries.length,
      entriesAdded: s.entriesAdded,
      maxDeletedEntryId: s.maxDeletedEntryId,
    };
  }

  private has(s: StoredStream | null, id: StreamId): boolean {
    return s !== null && s.entries.some((e) => e.id === id);
  }

  private nextId(last: StreamId): StreamId {
    const [lastMs = '0', lastSeq = '0'] = last.split('-');
    const ms = this.now();
    // Redis keeps ids increasing even when the clock steps back: it reuses the last ms.
    if (BigInt(ms) > BigInt(lastMs)) return `${ms}-0`;
    return `${lastMs}-${BigInt(lastSeq) + 1n}`;
  }

  private schedulePump(): void {
    if (this.pumpQueued || this.closed) return;
    this.pumpQueued = true;
    this.pumped = Promise.resolve().then(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (!this.isHealthy || this.closed || this.listener === null) return;
    for (const [stream, cursor] of [...this.cursors]) {
      if (this.cursors.get(stream) !== cursor) continue;
      const key = this.keys.get(stream);
      if (key?.kind === 'other') {
        this.cursors.delete(stream);
        this.listener.failed(stream, WRONG_TYPE);
        continue;
      }
      if (key === undefined) continue;
      let after = cursor.id;
      if (cursor.incarnation !== null && cursor.incarnation !== key.incarnation) {
        // The key was deleted and recreated: read the new incarnation from its start.
        after = '0-0';
        this.cursors.set(stream, { id: after, incarnation: key.incarnation });
        this.listener.reset(stream);
        if (this.cursors.get(stream)?.incarnation !== key.incarnation) continue;
      }
      const fresh = key.entries.filter((e) => compareStreamIds(e.id, after) > 0);
      const last = fresh[fresh.length - 1];
      if (last === undefined) {
        this.cursors.set(stream, { id: after, incarnation: key.incarnation });
        continue;
      }
      this.cursors.set(stream, { id: last.id, incarnation: key.incarnation });
      this.listener.entries(stream, fresh);
    }
  }
}
