import type { StreamId, StreamName } from '@streamgate/protocol';
import type { LiveReader } from './LiveReader.js';
import { ReaderPool } from './ReaderPool.js';
import type { RedisBatchReader } from './RedisBatchReader.js';

/** Live reads through batched blocking XREADs: the reader for a server that cannot notify. */
export class BatchLiveReader implements LiveReader {
  private readonly pool: ReaderPool<RedisBatchReader>;

  constructor(
    maxStreamsPerReader: number,
    newReader: (index: number) => RedisBatchReader,
    positions: Iterable<readonly [StreamName, StreamId]> = [],
  ) {
    this.pool = new ReaderPool(maxStreamsPerReader, newReader);
    for (const [stream, after] of positions) this.pool.watch(stream, after);
  }

  get ready(): boolean {
    return this.pool.ready;
  }

  get connectionCount(): number {
    return this.pool.readerCount;
  }

  watch(stream: StreamName, after: StreamId): void {
    this.pool.watch(stream, after);
  }

  unwatch(stream: StreamName): void {
    this.pool.unwatch(stream);
  }

  forget(stream: StreamName): void {
    this.pool.forget(stream);
  }

  cursor(stream: StreamName): StreamId | undefined {
    return this.pool.reader(stream)?.cursor(stream);
  }

  restart(stream: StreamName): boolean {
    return this.pool.reader(stream)?.restart(stream) === true;
  }

  positions(): Array<readonly [StreamName, StreamId]> {
    const out: Array<readonly [StreamName, StreamId]> = [];
    for (const stream of this.pool.streams()) {
      const cursor = this.cursor(stream);
      if (cursor !== undefined) out.push([stream, cursor]);
    }
    return out;
  }

  close(): Promise<void> {
    // Each reader stops delivering synchronously, at the top of its close().
    return this.pool.close();
  }
}
