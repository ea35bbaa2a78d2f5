import type { StreamId, StreamName } from '@streamgate/protocol';

/** One entry as a source returns it: the id and Redis's flat `[field, value, …]` list. */
export interface StreamEntry {
  readonly id: StreamId;
  readonly fields: readonly string[];
  /**
   * Set by the source when the entry cannot be relayed as stored (a field value is not valid
   * UTF-8): the hub sends `malformed` with this reason instead of an `event`, and the id still
   * advances every subscriber's position.
   */
  readonly malformed?: string;
}

/** What the hub needs to know about a stream to decide how a resume went. */
export interface StreamInfo {
  readonly lastGeneratedId: StreamId;
  readonly firstEntryId: StreamId | null;
  readonly length: number;
  readonly entriesAdded: number;
  readonly maxDeletedEntryId: StreamId;
}

export interface RangePage {
  readonly entries: StreamEntry[];
  readonly info: StreamInfo | null;
  readonly afterExists: boolean;
}

export type SourceError = { code: 'source_unavailable' | 'source_wrong_type'; retryable: boolean; message: string };
export type SourceResult<T> = { ok: true; value: T } | { ok: false; error: SourceError };

/**
 * The fan-out core's only view of storage. Redis sits behind it (RedisStreamSource); the core
 * never imports a client library, so it can be exercised against any implementation.
 */
export interface StreamSource {
  /**
   * The stream's metadata (`info: null` when it does not exist) and, when `probe` is given,
   * whether an entry with that id is still stored. One round trip.
   */
  inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>>;
  /**
   * Entries with id strictly greater than `after`, oldest first, at most `count`, read in one
   * round trip with the stream's metadata and whether `after` itself is still stored, so that a
   * catch-up can tell a contiguous page from one whose head was trimmed away meanwhile.
   */
  range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<RangePage>>;
  /**
   * Starts delivering entries with id greater than `after` to the listener given at
   * construction, in order, without gaps, until `unwatch`. One read per entry, whatever the
   * number of subscribers.
   */
  watch(stream: StreamName, after: StreamId): void;
  unwatch(stream: StreamName): void;
  /** False while the source cannot reach its storage. */
  readonly healthy: boolean;
  /**
   * While unhealthy, how long its storage has gone unanswered by the source's own measure (a
   * frozen server shows only once a probe is overdue); 0 or absent when healthy or not known.
   */
  readonly unansweredForMs?: number;
  close(): Promise<void>;
}

/** What a source reports to the hub from its live reads. */
export interface SourceListener {
  /** New entries of a watched stream, in order, each exactly once. */
  entries(stream: StreamName, entries: readonly StreamEntry[]): void;
  /** A watched stream can no longer be read (its key holds another type); it is unwatched. */
  failed(stream: StreamName, error: SourceError): void;
  /**
   * A watched stream's key now holds a new incarnation (deleted and recreated: its last id went
   * below the read position, `entries-added` fell, or the key vanished and came back). The source
   * has already moved its read position to the start of the new incarnation: the next `entries`
   * call for this stream starts with that incarnation's first entry.
   */
  reset(stream: StreamName): void;
}
