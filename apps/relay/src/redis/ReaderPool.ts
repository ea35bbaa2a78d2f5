import type { StreamId, StreamName } from '@streamgate/protocol';

/** What the pool needs of a reader (RedisBatchReader). */
export interface PooledReader {
  readonly size: number;
  readonly ready: boolean;
  add(stream: StreamName, after: StreamId): void;
  remove(stream: StreamName): void;
  close(): Promise<void>;
}

/**
 * Spreads watched streams over as few readers as `maxStreamsPerReader` allows: a pod serving
 * ten thousand streams holds ten blocking connections, not ten thousand. A reader is filled
 * before the next is created, and one that lost streams takes the next ones that join.
 */
export class ReaderPool<R extends PooledReader> {
  private readonly readers: R[] = [];
  private readonly readerOf = new Map<StreamName, R>();

  constructor(
    private readonly maxStreamsPerReader: number,
    private readonly create: (index: number) => R,
  ) {}

  get readerCount(): number {
    return this.readers.length;
  }

  get ready(): boolean {
    return this.readers.every((r) => r.ready);
  }

  /** The watched streams, in the order they were first watched. */
  streams(): IterableIterator<StreamName> {
    return this.readerOf.keys();
  }

  reader(stream: StreamName): R | undefined {
    return this.readerOf.get(stream);
  }

  watch(stream: StreamName, after: StreamId): void {
    if (this.readerOf.has(stream)) return;
    let reader = this.readers.find((r) => r.size < this.maxStreamsPerReader);
    if (reader === undefined) {
      reader = this.create(this.readers.length);
      this.readers.push(reader);
    }
    reader.add(stream, after);
    this.readerOf.set(stream, reader);
  }

  unwatch(stream: StreamName): void {
    this.readerOf.get(stream)?.remove(stream);
    this.readerOf.delete(stream);
  }

  /** A stream its reader has already dropped (its key stopped being a stream). */
  forget(stream: StreamName): void {
    this.readerOf.delete(stream);
  }

  async close(): Promise<void> {
    await Promise.all(this.readers.map((r) => r.close()));
  }
}
