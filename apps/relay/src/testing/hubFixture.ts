import { compareStreamIds } from '@streamgate/protocol';
import type { RelayError, StreamId, StreamName } from '@streamgate/protocol';
import type { Connection, TopicPublisher } from '../core/Connection.js';
import type { HubMetrics } from '../core/HubMetrics.js';
import { StreamHub } from '../core/StreamHub.js';
import type { RangePage, SourceListener, SourceResult, StreamEntry, StreamInfo, StreamSource } from '../core/StreamSource.js';

// The core is tested through its own interfaces: an in-memory stream store whose live reader
// runs only when the test says so, and connections that record frames. Cross-process tests in
// test/ cover the same paths over Redis and real sockets; these control the interleavings.

/**
 * One stream in memory. The first incarnation's ids are `1-0, 2-0, …`; a recreated key's are
 * `0-1, 0-2, …`, all lower, as when a key is deleted and recreated with explicit or older ids.
 */
export class HubTestSource implements StreamSource {
  entries: StreamEntry[] = [];
  readonly watched = new Map<string, StreamId>();
  rangeCalls = 0;
  inspectCalls = 0;
  entriesAdded = 0;
  maxDeletedEntryId: StreamId = '0-0';
  incarnation = 1;
  healthy = true;
  failNextRange = false;
  /** The next inspect throws instead of answering (a client library that rejects). */
  rejectNextInspect = false;
  /** Runs right before a range read is answered: lets a test trim history mid catch-up. */
  beforeRange: () => void = () => undefined;
  listener: SourceListener = { entries: () => undefined, failed: () => undefined, reset: () => undefined };

  append(n: number): void {
    for (let i = 0; i < n; i++) this.push(['data', JSON.stringify({ seq: this.entriesAdded + 1 })]);
  }

  /** Appends one entry with these raw fields (and, when given, a reason the source could not read it). */
  push(fields: readonly string[], malformed?: string): StreamId {
    const seq = this.entriesAdded + 1;
    const id = this.incarnation === 1 ? `${seq}-0` : `0-${seq}`;
    this.entries.push(malformed === undefined ? { id, fields } : { id, fields, malformed });
    this.entriesAdded++;
    return id;
  }

  trimTo(keep: number): void {
    const removed = this.entries.splice(0, this.entries.length - keep);
    const last = removed[removed.length - 1];
    if (last !== undefined) this.maxDeletedEntryId = last.id;
  }

  /** XDEL of one entry. */
  deleteEntry(id: StreamId): void {
    this.entries = this.entries.filter((e) => e.id !== id);
    if (compareStreamIds(id, this.maxDeletedEntryId) > 0) this.maxDeletedEntryId = id;
  }

  /** DEL and a new XADD: a new incarnation holding `n` entries, not yet noticed by the reader. */
  recreate(n: number): void {
    if (this.incarnation !== 1) throw new Error('HubTestSource recreates a stream once');
    this.incarnation = 2;
    this.entries = [];
    this.entriesAdded = 0;
    this.maxDeletedEntryId = '0-0';
    this.append(n);
  }

  /** What a live reader does when it notices the new incarnation: restart its cursor and report it. */
  noticeReset(stream: StreamName = 'st'): void {
    if (!this.watched.has(stream)) return;
    this.watched.set(stream, '0-0');
    this.listener.reset(stream);
  }

  /** What a live reader would do: hand over everything after each watched cursor. */
  read(): void {
    for (const [stream, cursor] of this.watched) {
      const fresh = this.entries.filter((e) => compareStreamIds(e.id, cursor) > 0);
      const last = fresh[fresh.length - 1];
      if (last === undefined) continue;
      this.watched.set(stream, last.id);
      this.listener.entries(stream, fresh);
    }
  }

  private info(): StreamInfo | null {
    if (this.entriesAdded === 0) return null;
    return {
      lastGeneratedId: this.incarnation === 1 ? `${this.entriesAdded}-0` : `0-${this.entriesAdded}`,
      firstEntryId: this.entries[0]?.id ?? null,
      length: this.entries.length,
      entriesAdded: this.entriesAdded,
      maxDeletedEntryId: this.maxDeletedEntryId,
    };
  }

  /** When set, an inspect's answer is taken at call time and handed over once this call's promise settles. */
  holdInspect: (() => Promise<void>) | null = null;

  inspect(_stream: string, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    this.inspectCalls++;
    if (this.rejectNextInspect) {
      this.rejectNextInspect = false;
      return Promise.reject(new Error('client library failed'));
    }
    const answer: SourceResult<{ info: StreamInfo | null; probeExists: boolean }> = {
      ok: true,
      value: { info: this.info(), probeExists: this.entries.some((e) => e.id === probe) },
    };
    const hold = this.holdInspect;
    return hold === null ? Promise.resolve(answer) : hold().then(() => answer);
  }

  async range(_stream: string, after: StreamId, count: number): Promise<SourceResult<RangePage>> {
    this.rangeCalls++;
    await Promise.resolve();
    this.beforeRange();
    if (this.failNextRange) {
      this.failNextRange = false;
      return { ok: false, error: { code: 'source_unavailable', retryable: true, message: 'connection lost' } };
    }
    const entries = this.entries.filter((e) => compareStreamIds(e.id, after) > 0).slice(0, count);
    return { ok: true, value: { entries, info: this.info(), afterExists: this.entries.some((e) => e.id === after) } };
  }

  watch(stream: string, after: StreamId): void {
    this.watched.set(stream, after);
  }
  unwatch(stream: string): void {
    this.watched.delete(stream);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface RecordedFrame {
  op: string;
  id?: string;
  data?: { seq: number };
  recovery?: string;
  position?: string;
  reason?: string;
  code?: string;
}

export class HubTestConnection implements Connection {
  readonly frames: RecordedFrame[] = [];
  readonly topics = new Set<string>();
  closed = false;
  /** Bytes the socket still holds; grows by `frameCost` per send until the test drains it. */
  buffered = 0;
  frameCost = 0;
  /** How many of the next sends fail, as at uWS's backpressure limit. */
  refuseNext = 0;
  closedWith: { code: number; reason: string } | null = null;
  /** The socket write each frame in `frames` went out in: a cork's sends share one, any other send has its own. */
  readonly writes: number[] = [];
  private lastWrite = 0;
  private corked = false;
  send(frame: string): boolean {
    if (this.refuseNext > 0) {
      this.refuseNext--;
      return false;
    }
    this.frames.push(JSON.parse(frame) as RecordedFrame);
    this.writes.push(this.corked ? this.lastWrite : ++this.lastWrite);
    this.buffered += this.frameCost;
    return true;
  }
  subscribe(topic: string): void {
    this.topics.add(topic);
  }
  unsubscribe(topic: string): void {
    this.topics.delete(topic);
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  cork(fn: () => void): void {
    if (this.corked) return fn();
    this.lastWrite++;
    this.corked = true;
    try {
      fn();
    } finally {
      this.corked = false;
    }
  }
  close(code: number, reason: string): void {
    this.closed = true;
    this.closedWith = { code, reason };
  }
  seqs(): number[] {
    return this.frames.filter((f) => f.op === 'event').map((f) => f.data?.seq ?? -1);
  }
  /** Ids of event and malformed frames, in arrival order. */
  ids(): string[] {
    return this.frames.filter((f) => f.op === 'event' || f.op === 'malformed').map((f) => f.id ?? '?');
  }
  ops(): string[] {
    return this.frames.map((f) => f.op);
  }
}

/** Every hub metric call, as `name` or `name:label`. */
export class HubTestMetrics implements HubMetrics {
  readonly calls: string[] = [];
  delivered(): void {}
  malformedEntry(): void {
    this.calls.push('malformedEntry');
  }
  catchUpPage(): void {}
  slowConsumerCut(): void {
    this.calls.push('slowConsumerCut');
  }
  catchUpPaused(): void {
    this.calls.push('catchUpPaused');
  }
  sourceError(operation: string): void {
    this.calls.push(`sourceError:${operation}`);
  }
  recovery(outcome: string): void {
    this.calls.push(`recovery:${outcome}`);
  }
}

export const endings: RelayError[] = [];
export const ended = (error: RelayError): void => void endings.push(error);

export interface HubFixtureOptions {
  pageSize?: number;
  maxPendingCatchUpBytes?: number;
  maxBufferedBytes?: number;
  lingerMs?: number;
}

export function hubFixture(pageSize = 3, maxPendingCatchUpBytes = 1 << 18, more: HubFixtureOptions = {}) {
  endings.length = 0;
  const source = new HubTestSource();
  const metrics = new HubTestMetrics();
  const conns: HubTestConnection[] = [];
  const publisher: TopicPublisher = {
    publish: (topic, frame) => conns.filter((c) => c.topics.has(topic)).forEach((c) => c.send(frame)),
    subscriberCount: (topic) => conns.filter((c) => c.topics.has(topic)).length,
  };
  const hub = new StreamHub({
    source,
    publisher,
    metrics,
    topicPrefix: 't|',
    catchUpPageSize: more.pageSize ?? pageSize,
    maxBufferedBytes: more.maxBufferedBytes ?? 1 << 20,
    maxPendingCatchUpBytes: more.maxPendingCatchUpBytes ?? maxPendingCatchUpBytes,
    lingerMs: more.lingerMs ?? 0,
  });
  source.listener = hub.listener;
  const connect = (): HubTestConnection => {
    const c = new HubTestConnection();
    conns.push(c);
    return c;
  };
  return { source, hub, connect, metrics };
}

/** Waits for microtask-driven progress (catch-up pages) without timers; fails after a bound. */
export async function untilSettled(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (condition()) return;
    await Promise.resolve();
  }
  throw new Error('condition not reached after 1,000 microtask turns');
}
