import { jetStreamSequence, jetStreamSubject, sleepOn } from '@streamgate/protocol';
import type { Clock, StreamId, StreamName } from '@streamgate/protocol';
import type { Msg } from '@nats-io/transport-node';
import type { SourceListener, StreamEntry } from '../core/StreamSource.js';
import type { JetStreamOperation, JetStreamResetCause } from './JetStreamSourceOptions.js';
import type { LinkSubscription } from './NatsLink.js';
import { jetStreamLiveSubject } from '@streamgate/protocol';
import type { RepublishMode } from './republishMode.js';
import { isStreamNotFound, toError } from './natsSourceError.js';
import { parseRepublished } from './parseRepublished.js';
import type { RepublishedMessage } from './parseRepublished.js';
import { ReadQueue } from './ReadQueue.js';
import type { StreamChange } from './StreamCheck.js';
import type { SubjectReader } from './SubjectReader.js';
import { toStreamEntry } from './toStreamEntry.js';

export interface LiveStreamsOptions {
  readonly jetStream: string;
  readonly listener: SourceListener;
  readonly reader: SubjectReader;
  readonly clock: Clock;
  /** Resolves once the connection is open (it waits while the link is connecting or down); rejects once closed. */
  readonly opened: () => Promise<void>;
  /** A subscription the link makes again on every new connection (NatsLink). */
  readonly subscribe: (subject: string, callback: (error: Error | null, msg: Msg) => void) => LinkSubscription;
  readonly maxConcurrentReads: number;
  readonly pollIntervalMs: number;
  /** A live message says an entry the reader delivered may be gone: look at the JetStream stream now. */
  readonly suspect: () => void;
  readonly onError: (operation: JetStreamOperation, error: Error) => void;
  readonly onRecreated: (stream: StreamName, cause: JetStreamResetCause) => void;
}

/** One watched stream: its subject, its read position (a sequence), its live subscription. */
interface Watched {
  readonly stream: StreamName;
  readonly subject: string;
  cursor: number;
  /** Moves on every reset: a read begun before one delivers nothing. */
  epoch: number;
  sub: LinkSubscription | null;
  /** Live messages that came while a read of the stream was queued or running, looked at after it. */
  held: RepublishedMessage[];
  /**
   * Watched from a position that is no sequence, or of an incarnation found replaced before the
   * watch: read from the start, and the first read tells the listener `reset`, with this cause.
   */
  tellReset: JetStreamResetCause | null;
  retryMs: number;
}

/** Messages read per request loop of one read, before the stream yields its turn. */
const READ_PAGE = 256;
/** Held live messages beyond this are dropped: the read that follows covers them. */
const MAX_HELD = 1_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * The live reads of the watched streams. Each has a core NATS subscription of its own on its
 * republished subject (never a wildcard over the whole JetStream stream: a pod hears only the
 * streams it serves). A republished message whose Nats-Last-Sequence is the stream's position
 * is the next entry, delivered with no read. Anything else (a message lost on the way, one
 * whose predecessor was never heard, a subscription just made, a reconnect, a new leader) is
 * settled by reading the stream by sequence from its position, which JetStream answers from its
 * store: entries are delivered once, in order, whatever core NATS lost or sent twice. Reads run
 * one per stream at a time (ReadQueue), and the live messages that arrive meanwhile wait for the
 * read's result.
 */
export class LiveStreams {
  private readonly watched = new Map<StreamName, Watched>();
  private readonly queue: ReadQueue<StreamName>;
  private mode: RepublishMode = 'live';
  private cancelPoll: (() => void) | null = null;
  private nextEpoch = 0;
  /** Each stream's position and epoch when the periodic check in flight was sent. */
  private atCheck = new Map<StreamName, { readonly cursor: number; readonly epoch: number }>();

  constructor(private readonly options: LiveStreamsOptions) {
    this.queue = new ReadQueue(options.maxConcurrentReads, this.read);
  }

  /** `stale`: the position is of an incarnation since replaced (the stream is read from its start). */
  watch(stream: StreamName, after: StreamId, stale: JetStreamResetCause | null = null): void {
    this.unwatch(stream);
    // A Redis-style id names no sequence of this stream, so nothing says what of it the reader
    // holds: like a stale position, it is read from its start and the listener told `reset`, as
    // for a Redis stream recreated under its reader (subscribers drop what they built and get
    // every retained entry).
    const named = jetStreamSequence(after);
    const seq = stale === null ? named : null;
    const w: Watched = {
      stream,
      subject: jetStreamSubject(this.options.jetStream, stream),
      cursor: seq ?? 0,
      epoch: ++this.nextEpoch,
      sub: null,
      held: [],
      tellReset: seq !== null ? null : (stale ?? 'unknown_position'),
      retryMs: 0,
    };
    this.watched.set(stream, w);
    void this.subscribe(w);
  }

  unwatch(stream: StreamName): void {
    const w = this.watched.get(stream);
    if (w === undefined) return;
    this.watched.delete(stream);
    this.queue.forget(stream);
    w.sub?.unsubscribe();
  }

  /** Reads every watched stream from its position (a reconnect, a new leader, a poll). */
  readAll(): void {
    for (const stream of this.watched.keys()) this.queue.request(stream);
  }

  /** A periodic check is being sent: the positions its answer is to be compared with. */
  snapshot(): void {
    this.atCheck = new Map([...this.watched.values()].map((w) => [w.stream, { cursor: w.cursor, epoch: w.epoch }]));
  }

  /** What a look at the JetStream stream found. */
  apply(change: StreamChange): void {
    for (const w of [...this.watched.values()]) {
      // Compared with the position when the check was sent: entries delivered since may lie
      // beyond the last sequence the leader reported, in the same incarnation.
      const sent = this.atCheck.get(w.stream);
      const fell = change.lastSeq !== null && sent !== undefined && sent.epoch === w.epoch && sent.cursor > change.lastSeq;
      if (change.recreated) this.reset(w, 'recreated');
      else if (fell) this.reset(w, 'sequence_fell');
    }
    if (change.leaderChanged) this.readAll();
  }

  /**
   * Without a republish the relay can hear, every watched stream is read each poll interval:
   * entries arrive late but none is lost, and the source reported the configuration (`republish`)
   * so that it is fixed rather than paid for in reads. Republish back: one read of every stream
   * covers what was written while it was off.
   */
  setMode(mode: RepublishMode): void {
    this.mode = mode;
    this.cancelPoll?.();
    this.cancelPoll = null;
    if (mode === 'none') this.poll();
    else this.readAll();
  }

  close(): void {
    this.cancelPoll?.();
    this.queue.close();
    for (const stream of [...this.watched.keys()]) this.unwatch(stream);
  }

  private poll(): void {
    this.cancelPoll = this.options.clock.after(this.options.pollIntervalMs, () => {
      this.readAll();
      this.poll();
    });
  }

  private async subscribe(w: Watched): Promise<void> {
    try {
      await this.options.opened();
    } catch (thrown) {
      // Closed before it connected: there is nothing to read from.
      if (this.watched.get(w.stream) === w) this.options.onError('connection', toError(thrown));
      return;
    }
    if (this.watched.get(w.stream) !== w) return;
    const live = jetStreamLiveSubject(this.options.jetStream, w.stream);
    w.sub = this.options.subscribe(live, (error, msg) => this.heard(w, error, msg));
    // The subscription is sent before this read: whatever was stored before the server knew of
    // it is in the read, whatever after it is republished (and skipped if the read had it).
    this.queue.request(w.stream);
  }

  private heard(w: Watched, error: Error | null, msg: Msg): void {
    if (this.watched.get(w.stream) !== w) return;
    if (error !== null) {
      this.options.onError('live', error);
      this.queue.request(w.stream);
      return;
    }
    const live = parseRepublished(msg, this.options.jetStream, w.subject);
    if (live === null) {
      this.options.onError('live', new Error(`not a republished message of ${w.subject} on ${msg.subject}`));
      this.queue.request(w.stream);
      return;
    }
    if (!this.queue.isBusy(w.stream)) this.offer(w, live);
    else if (w.held.push(live) > MAX_HELD) {
      w.held = [];
      this.queue.request(w.stream);
    }
  }

  /** Takes a live message against the position; false when it asked for a read instead. */
  private offer(w: Watched, live: RepublishedMessage): boolean {
    if (live.seq <= w.cursor) return true;
    if (live.lastSeq === w.cursor && live.payload !== null && this.mode === 'live') {
      this.deliver(w, [toStreamEntry(live.seq, live.payload)]);
      return true;
    }
    // Its predecessor is below the position: the entry at the position is gone (deleted, or the
    // JetStream stream recreated with sequences that caught up). The check tells which.
    if (live.lastSeq < w.cursor) this.options.suspect();
    this.queue.request(w.stream);
    return false;
  }

  private deliver(w: Watched, entries: readonly StreamEntry[]): void {
    if (w.tellReset !== null) {
      const cause = w.tellReset;
      w.tellReset = null;
      this.options.onRecreated(w.stream, cause);
      this.options.listener.reset(w.stream);
    }
    const fresh = entries.filter((entry) => (jetStreamSequence(entry.id) ?? 0) > w.cursor);
    const last = fresh[fresh.length - 1];
    if (last === undefined) return;
    w.cursor = jetStreamSequence(last.id) ?? w.cursor;
    this.options.listener.entries(w.stream, fresh);
  }

  private reset(w: Watched, cause: JetStreamResetCause): void {
    w.epoch = ++this.nextEpoch;
    w.cursor = 0;
    w.held = [];
    w.tellReset = null;
    this.options.onRecreated(w.stream, cause);
    this.options.listener.reset(w.stream);
    this.queue.request(w.stream);
  }

  /** One read of a stream from its position to its end; never rejects (ReadQueue). */
  private readonly read = async (stream: StreamName): Promise<void> => {
    const w = this.watched.get(stream);
    if (w === undefined) return;
    const epoch = w.epoch;
    const current = () => this.watched.get(stream) === w && w.epoch === epoch;
    try {
      for (;;) {
        const page = await this.options.reader.after(w.subject, w.cursor, READ_PAGE);
        if (!current()) return;
        if (w.tellReset !== null || page.entries.length > 0) this.deliver(w, page.entries);
        if (page.entries.length < READ_PAGE) break;
      }
      w.retryMs = 0;
      const held = w.held;
      w.held = [];
      for (const live of held) if (!this.offer(w, live)) break;
    } catch (thrown) {
      if (!current()) return;
      // The JetStream stream is gone: nothing to read until it exists again, which the check
      // sees (another `created`) and answers with a reset.
      if (isStreamNotFound(thrown)) return;
      this.options.onError('read', toError(thrown));
      w.retryMs = Math.min(Math.max(RETRY_MIN_MS, w.retryMs * 2), RETRY_MAX_MS);
      await sleepOn(this.options.clock, w.retryMs);
      if (current()) this.queue.request(stream);
    }
  };
}
