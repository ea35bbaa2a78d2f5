import type { Redis } from 'ioredis';
import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { EntriesListener } from '../core/StreamSource.js';
import { parseXread } from './parseReplies.js';
import { backoffDelay } from './backoffDelay.js';

export interface BatchReaderOptions {
  readonly connection: Redis;
  /** Issues CLIENT UNBLOCK for this reader's connection; runs on another connection. */
  readonly unblock: (clientId: number) => Promise<boolean>;
  readonly onEntries: EntriesListener;
  readonly blockMs: number;
  readonly count: number;
  readonly onError: (error: Error) => void;
  readonly onRead: () => void;
}

/**
 * One blocking connection reading many streams with a single `XREAD BLOCK … STREAMS k1 k2 … id1
 * id2 …`. A stream added while the read is blocked joins at once: the reader is woken with
 * CLIENT UNBLOCK instead of waiting out the block timeout.
 */
export class RedisBatchReader {
  private readonly cursors = new Map<StreamName, StreamId>();
  private clientId: number | null = null;
  private inFlight = false;
  private dirty = false;
  private running = true;
  private idleWake: (() => void) | null = null;
  private failures = 0;

  constructor(private readonly options: BatchReaderOptions) {
    options.connection.on('ready', () => void this.learnClientId());
    void this.loop();
  }

  get size(): number {
    return this.cursors.size;
  }

  has(stream: StreamName): boolean {
    return this.cursors.has(stream);
  }

  add(stream: StreamName, after: StreamId): void {
    this.cursors.set(stream, after);
    this.wake();
  }

  remove(stream: StreamName): void {
    // No wake: a stream nobody reads any more drops out of the next XREAD by itself.
    this.cursors.delete(stream);
  }

  async close(): Promise<void> {
    this.running = false;
    this.idleWake?.();
    this.options.connection.disconnect();
    await Promise.resolve();
  }

  private async learnClientId(): Promise<void> {
    try {
      const id = await this.options.connection.call('CLIENT', ['ID']);
      this.clientId = typeof id === 'number' ? id : Number(id);
    } catch (error) {
      this.options.onError(error as Error);
    }
  }

  private wake(): void {
    this.dirty = true;
    if (this.idleWake !== null) {
      this.idleWake();
      return;
    }
    if (this.inFlight) void this.unblockInFlight();
  }

  /**
   * CLIENT UNBLOCK answers 0 when the XREAD was sent but not yet blocked in Redis; retry
   * briefly until it lands or the read returns by itself.
   */
  private async unblockInFlight(): Promise<void> {
    for (let attempt = 0; attempt < 50 && this.inFlight && this.dirty && this.running; attempt++) {
      if (this.clientId !== null && (await this.options.unblock(this.clientId))) return;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.cursors.size === 0) {
        await new Promise<void>((resolve) => (this.idleWake = resolve));
        this.idleWake = null;
        continue;
      }
      this.dirty = false;
      const keys = [...this.cursors.keys()];
      const ids = keys.map((k) => this.cursors.get(k) as StreamId);
      this.inFlight = true;
      try {
        const reply = await this.options.connection.call('XREAD', [
          'COUNT',
          this.options.count,
          'BLOCK',
          this.options.blockMs,
          'STREAMS',
          ...keys,
          ...ids,
        ]);
        this.inFlight = false;
        this.failures = 0;
        this.options.onRead();
        for (const [stream, entries] of parseXread(reply)) {
          const last = entries[entries.length - 1];
          // A stream removed (or re-added with another cursor) while the read was out is skipped.
          const current = this.cursors.get(stream);
          if (last === undefined || current === undefined) continue;
          if (compareStreamIds(last.id, current) > 0) this.cursors.set(stream, last.id);
          try {
            this.options.onEntries(stream, entries);
          } catch (error) {
            // The cursor has moved on: a throwing listener must be loud, never a silent gap.
            this.options.onError(error as Error);
          }
        }
      } catch (error) {
        this.inFlight = false;
        if (!this.running) return;
        this.options.onError(error as Error);
        this.failures++;
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(this.failures, 50, 5_000)));
      }
    }
  }
}
