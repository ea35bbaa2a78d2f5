import type { StreamId, StreamName } from '@streamgate/protocol';
import type { StreamEntry } from '../core/StreamSource.js';
import type { LiveMessage } from './parseLiveMessage.js';

/** One key's part of a pipelined read: its entries after the id, or the error Redis answered. */
export type KeyRead = { readonly ok: true; readonly entries: StreamEntry[] } | { readonly ok: false; readonly error: Error };

/**
 * The reading side of a NotifyReader's Redis: non-blocking reads and the keyspace events of
 * whatever pub/sub connections hold its channels. On one instance it comes with one pub/sub
 * connection (NotifyRedis); on a Redis Cluster with one per primary (ClusterPubSub).
 */
export interface NotifyReads {
  /** The read connection can take a read. */
  readonly readReady: boolean;
  /** Redis connections these reads and channels hold. */
  readonly connectionCount: number;
  /** `XREAD COUNT n STREAMS key id` per pair, one pipeline, one result per pair in order: finds the key a grouped read failed on. */
  read(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]>;
  /**
   * One `XREAD COUNT n STREAMS k1 … kn id1 … idn` for all pairs: the reader's usual read, cheaper
   * than a command per key. An error (one key of another type) is every key's.
   */
  readGrouped(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]>;
  /** A keyspace event (`xadd`, `del`, …) on a subscribed key. */
  onEvent(listener: (key: StreamName, event: string) => void): void;
  /**
   * A writer's live message on a subscribed key's live channel (null: one that does not parse),
   * in order with the keyspace events of the same connection: a script's `xadd` event comes
   * just before the message it publishes.
   */
  onLive(listener: (key: StreamName, message: LiveMessage | null) => void): void;
  /** The read connection was lost: a read in flight never settles on its own. */
  onReadClose(listener: () => void): void;
  disconnect(): void;
}

/**
 * What a NotifyReader needs from one Redis instance: a pub/sub connection for the keys' keyspace
 * channels and a connection for non-blocking reads. IoredisNotifyRedis is the real one; the
 * reader's scheduling is unit-tested against an in-memory one.
 */
export interface NotifyRedis extends NotifyReads {
  /** The pub/sub connection can take SUBSCRIBE. */
  readonly subscriberReady: boolean;
  /** SUBSCRIBE to these keys' keyspace and live channels; resolves once Redis confirmed every one. */
  subscribe(keys: readonly StreamName[]): Promise<void>;
  unsubscribe(keys: readonly StreamName[]): Promise<void>;
  /** The pub/sub connection is ready again after a loss: the server holds none of its channels. */
  onSubscriberReady(listener: () => void): void;
  /** The pub/sub connection was lost: what was subscribed is gone, what was in flight never settles. */
  onSubscriberClose(listener: () => void): void;
}
