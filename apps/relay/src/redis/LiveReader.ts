import type { StreamId, StreamName } from '@streamgate/protocol';

/**
 * What RedisStreamSource needs of its live reads, whichever way they find new entries: the
 * batched blocking XREAD (BatchLiveReader) or reads woken by keyspace notifications
 * (NotifyReader). Positions are stream ids, so one reader's positions start another.
 */
export interface LiveReader {
  readonly ready: boolean;
  /** Redis connections this reader holds. */
  readonly connectionCount: number;
  watch(stream: StreamName, after: StreamId): void;
  unwatch(stream: StreamName): void;
  /** A stream already dropped because its key holds another type. */
  forget(stream: StreamName): void;
  /** The position the next read of this stream starts after. */
  cursor(stream: StreamName): StreamId | undefined;
  /** The key holds a new incarnation: read it again from its start. False if not watched. */
  restart(stream: StreamName): boolean;
  /** Every watched stream with its position, in the order they were watched. */
  positions(): Array<readonly [StreamName, StreamId]>;
  /**
   * Stops reading. Nothing is delivered once this returns (before its promise settles): a
   * mode switch takes `positions()` and closes in the same tick, so the next reader starts
   * exactly where this one stopped.
   */
  close(): Promise<void>;
}

export type ReadMode = 'notify' | 'batch';
