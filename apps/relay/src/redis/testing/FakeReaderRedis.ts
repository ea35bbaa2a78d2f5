import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { StreamEntry } from '../../core/StreamSource.js';
import type { ReaderRedis, XreadBatch } from '../ReaderRedis.js';

/** An error as Redis would reply it (ioredis names such errors ReplyError). */
export class FakeReplyError extends Error {
  override readonly name = 'ReplyError';
}

interface BlockedRead {
  readonly ids: ReadonlyMap<StreamName, StreamId>;
  readonly resolve: (batches: XreadBatch[]) => void;
  readonly reject: (error: Error) => void;
}

/**
 * An in-memory Redis for one batch reader: streams as arrays, one blocking XREAD at a time that a
 * write to one of its keys or CLIENT UNBLOCK wakes, and the faults a real connection has.
 */
export class FakeReaderRedis implements ReaderRedis {
  private readonly streams = new Map<StreamName, StreamEntry[]>();
  private keys: readonly StreamName[] = [];
  private readonly sent: Array<{ keys: readonly StreamName[]; ids: StreamId[] }> = [];
  private blockedRead: BlockedRead | null = null;
  private readonly closeListeners: Array<() => void> = [];
  private readonly failures: Error[] = [];
  private connectionId = 1;
  private unblockMisses = 0;
  private unblocks = 0;

  constructor(private readonly count = 1_000) {}

  // --- what the test controls and sees

  xadd(stream: StreamName, id: StreamId, fields: readonly string[] = ['data', '{}']): void {
    const entries = this.streams.get(stream) ?? [];
    entries.push({ id, fields });
    this.streams.set(stream, entries);
    const blocked = this.blockedRead;
    if (blocked === null) return;
    const batches = this.batches(blocked.ids);
    if (batches.length === 0) return;
    this.blockedRead = null;
    blocked.resolve(batches);
  }

  /** The next read is refused with this error. */
  failNextRead(error: Error): void {
    this.failures.push(error);
  }

  /** The next `n` CLIENT UNBLOCKs find the read sent but not yet blocked. */
  missUnblocks(n: number): void {
    this.unblockMisses = n;
  }

  /** The connection is lost: the blocked read never settles, and a new CLIENT ID follows. */
  dropConnection(): void {
    this.blockedRead = null;
    this.connectionId++;
    for (const listener of this.closeListeners) listener();
  }

  get reads(): ReadonlyArray<{ keys: readonly StreamName[]; ids: StreamId[] }> {
    return this.sent;
  }

  get blocked(): boolean {
    return this.blockedRead !== null;
  }

  get unblockCalls(): number {
    return this.unblocks;
  }

  // --- ReaderRedis

  readonly ready = true;

  clientId(): Promise<number> {
    return Promise.resolve(this.connectionId);
  }

  setKeys(keys: readonly StreamName[]): void {
    this.keys = keys;
  }

  read(ids: Iterable<StreamId>): Promise<XreadBatch[]> {
    const list = [...ids];
    this.sent.push({ keys: this.keys, ids: list });
    if (list.length !== this.keys.length) return Promise.reject(new Error(`${list.length} ids for ${this.keys.length} keys`));
    const failure = this.failures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    const at = new Map(this.keys.map((k, i) => [k, list[i] ?? '0-0']));
    const batches = this.batches(at);
    if (batches.length > 0) return Promise.resolve(batches);
    return new Promise((resolve, reject) => (this.blockedRead = { ids: at, resolve, reject }));
  }

  unblock(clientId: number): Promise<boolean> {
    this.unblocks++;
    const blocked = this.blockedRead;
    if (clientId !== this.connectionId || blocked === null) return Promise.resolve(false);
    if (this.unblockMisses > 0) {
      this.unblockMisses--;
      return Promise.resolve(false);
    }
    this.blockedRead = null;
    blocked.resolve([]);
    return Promise.resolve(true);
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  disconnect(): void {
    this.blockedRead?.reject(new Error('disconnected'));
    this.blockedRead = null;
  }

  private batches(ids: ReadonlyMap<StreamName, StreamId>): XreadBatch[] {
    const out: XreadBatch[] = [];
    for (const [key, after] of ids) {
      const newer = (this.streams.get(key) ?? []).filter((e) => compareStreamIds(e.id, after) > 0).slice(0, this.count);
      if (newer.length > 0) out.push([key, newer]);
    }
    return out;
  }
}
