import type { StreamId, StreamName } from '@streamgate/protocol';
import type { StreamEntry } from '../core/StreamSource.js';

/** One stream's part of an XREAD reply. */
export type XreadBatch = readonly [stream: string, entries: StreamEntry[]];

/**
 * What a RedisBatchReader needs from Redis: one blocking connection of its own, plus CLIENT
 * UNBLOCK sent on another. IoredisReaderRedis is the real one; the reader's scheduling is
 * unit-tested against an in-memory one.
 */
export interface ReaderRedis {
  /** Connected and able to take a read. */
  readonly ready: boolean;
  /** This connection's CLIENT ID: what CLIENT UNBLOCK needs. It changes with every reconnect. */
  clientId(): Promise<number>;
  /** The keys of every following read, in the order their ids will be given. */
  setKeys(keys: readonly StreamName[]): void;
  /** One blocking XREAD from these ids (one per key, in order); empty when the block timed out. */
  read(ids: Iterable<StreamId>): Promise<XreadBatch[]>;
  /** Wakes this connection's blocked read (it returns empty); false if it was not blocked yet. */
  unblock(clientId: number): Promise<boolean>;
  /** The connection was lost. A read in flight then never settles on its own. */
  onClose(listener: () => void): void;
  disconnect(): void;
}
