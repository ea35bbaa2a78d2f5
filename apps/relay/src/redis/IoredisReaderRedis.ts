import type { Redis } from 'ioredis';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { BatchXread } from './BatchXread.js';
import { parseInteger, parseXread } from './parseReplies.js';
import type { ReaderRedis, XreadBatch } from './ReaderRedis.js';

export interface IoredisReaderOptions {
  /** A connection of its own, created with `autoResendUnfulfilledCommands: false`. */
  readonly connection: Redis;
  /** Issues CLIENT UNBLOCK for this reader's connection; runs on another connection. */
  readonly unblock: (clientId: number) => Promise<boolean>;
  readonly count: number;
  readonly blockMs: number;
}

/** ReaderRedis over ioredis: the batched XREAD's bytes come from BatchXread, its reply is parsed here. */
export class IoredisReaderRedis implements ReaderRedis {
  private readonly xread: BatchXread;

  constructor(private readonly options: IoredisReaderOptions) {
    this.xread = new BatchXread(options.count, options.blockMs);
  }

  get ready(): boolean {
    return this.options.connection.status === 'ready';
  }

  async clientId(): Promise<number> {
    return parseInteger(await this.options.connection.call('CLIENT', ['ID']), 'client id');
  }

  setKeys(keys: readonly StreamName[]): void {
    this.xread.setKeys(keys);
  }

  async read(ids: Iterable<StreamId>): Promise<XreadBatch[]> {
    return parseXread(await this.xread.send(this.options.connection, ids));
  }

  unblock(clientId: number): Promise<boolean> {
    return this.options.unblock(clientId);
  }

  onClose(listener: () => void): void {
    this.options.connection.on('close', listener);
  }

  disconnect(): void {
    this.options.connection.disconnect();
  }
}
