import { backoffDelay, compareStreamIds, STREAM_START } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { StreamEntry } from '../core/StreamSource.js';
import { isWrongType, toError } from './redisFailure.js';
import type { ReaderRedis, XreadBatch } from './ReaderRedis.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

export interface BatchReaderOptions {
  readonly redis: ReaderRedis;
  readonly clock: Clock;
  readonly onEntries: (stream: StreamName, entries: readonly StreamEntry[]) => void;
  /**
   * The whole batch was refused because a key holds another type; returns the keys to drop
   * (after telling their subscribers). One bad key must not stop every stream on the reader.
   */
  readonly onWrongType: (keys: readonly StreamName[]) => Promise<readonly StreamName[]>;
  readonly onError: (error: Error) => void;
  readonly onRead: () => void;
  /**
   * A look found the key missing after it existed (IncarnationTracker.vanished): what a read
   * returns for it is a new incarnation's, delivered from its start after its `stream_reset`
   * once the look asked for (`onSuspect`) finds it back; not from the old cursor before it.
   */
  readonly vanished?: (stream: StreamName) => boolean;
  readonly onSuspect?: (stream: StreamName) => void;
}

/**
 * A batched XREAD costs Redis and the client in proportion to the streams it names, not to the
 * entries it returns. Re-issued the moment a reply arrives, a reader of 1,000 quiet-ish streams
 * read one or two entries per round trip and spent most of its CPU (and Redis's) re-sending
 * 2,000 arguments (bench: 1,000 streams × 10 subscribers). After a read that returned entries the
 * next one waits a little, longer for wider reads, so each read carries a batch.
 */
const COALESCE_MS_PER_STREAM = 0.002;
const MAX_COALESCE_MS = 2;

export function coalesceDelayMs(streams: number): number {
  return Math.min(MAX_COALESCE_MS, streams * COALESCE_MS_PER_STREAM);
}

/**
 * One blocking connection reading many streams with a single `XREAD BLOCK … STREAMS k1 k2 … id1
 * id2 …`. A stream added while the read is blocked joins at once: the reader is woken with
 * CLIENT UNBLOCK instead of waiting out the block timeout.
 */
export class RedisBatchReader {
  private readonly cursors = new Map<StreamName, StreamId>();
  /** The keys are handed to Redis (and encoded) again only when the set changed. */
  private keysChanged = true;
  private keys: readonly StreamName[] = [];
  /** Streams restarted while the read was out: what it returns for them is from a stale position. */
  private readonly restartedDuringRead = new Set<StreamName>();
  /** This connection's CLIENT ID; null until known, and again after every reconnect. */
  private clientId: number | null = null;
  private inFlight = false;
  private dirty = false;
  private unblocking = false;
  private running = true;
  private idleWake: (() => void) | null = null;
  private failures = 0;

  /** Rejects the read in flight; ioredis never settles a command lost with its connection. */
  private abortRead: ((error: Error) => void) | null = null;

  constructor(private readonly options: BatchReaderOptions) {
    options.redis.onClose(() => {
      this.clientId = null;
      this.abortRead?.(new Error('reader connection closed during XREAD'));
    });
    void this.loop();
  }

  get size(): number {
    return this.cursors.size;
  }

  get ready(): boolean {
    return this.options.redis.ready;
  }

  add(stream: StreamName, after: StreamId): void {
    // A new key goes to the end of the map's order; an existing one keeps its place.
    if (!this.cursors.has(stream)) this.keysChanged = true;
    this.cursors.set(stream, after);
    this.wake();
  }

  /** The position the next read of this stream starts after. */
  cursor(stream: StreamName): StreamId | undefined {
    return this.cursors.get(stream);
  }

  /**
   * The key holds a new incarnation: read it again from its start, at once. A read already out
   * was sent with the old position; its entries for this stream are dropped and read again.
   */
  restart(stream: StreamName): boolean {
    if (!this.cursors.has(stream)) return false;
    this.cursors.set(stream, STREAM_START);
    if (this.inFlight) this.restartedDuringRead.add(stream);
    this.wake();
    return true;
  }

  remove(stream: StreamName): void {
    // No wake: a stream nobody reads any more drops out of the next XREAD by itself.
    if (this.cursors.delete(stream)) this.keysChanged = true;
  }

  async close(): Promise<void> {
    this.running = false;
    this.idleWake?.();
    this.options.redis.disconnect();
    await Promise.resolve();
  }

  private wake(): void {
    this.dirty = true;
    if (this.idleWake !== null) {
      this.idleWake();
      return;
    }
    // One unblocker at a time: a burst of new streams (a resume storm) restarts the read once.
    if (this.inFlight && !this.unblocking) void this.unblockInFlight();
  }

  /**
   * CLIENT UNBLOCK answers 0 when the XREAD was sent but is not yet blocked in Redis; retry
   * briefly until it lands or the read returns by itself.
   */
  private async unblockInFlight(): Promise<void> {
    this.unblocking = true;
    try {
      for (let attempt = 0; attempt < 50 && this.inFlight && this.dirty && this.running; attempt++) {
        if (this.clientId !== null && (await this.options.redis.unblock(this.clientId))) return;
        await sleepOn(this.options.clock, 2);
      }
    } finally {
      this.unblocking = false;
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.cursors.size === 0) {
        await new Promise<void>((resolve) => (this.idleWake = resolve));
        this.idleWake = null;
        continue;
      }
      let keys: readonly StreamName[] = [];
      try {
        // Learn the id before blocking: it is what CLIENT UNBLOCK needs to wake this read.
        if (this.clientId === null) this.clientId = await this.options.redis.clientId();
        // The streams are taken only now, in the tick the read is sent: one added while CLIENT ID
        // was out would otherwise miss this read and wait out its whole block timeout.
        if (this.cursors.size === 0) continue;
        this.dirty = false;
        // With a thousand streams the read's own cost is in its arguments: the keys are encoded
        // again only when the set changed, in the map's order, which the ids below follow.
        if (this.keysChanged) {
          this.keys = [...this.cursors.keys()];
          this.options.redis.setKeys(this.keys);
          this.keysChanged = false;
        }
        keys = this.keys;
        this.restartedDuringRead.clear();
        this.inFlight = true;
        const lost = new Promise<never>((_, reject) => (this.abortRead = reject));
        const batches = await Promise.race([this.options.redis.read(this.cursors.values()), lost]);
        this.abortRead = null;
        this.inFlight = false;
        // Closed while the read was out (a mode switch): the next reader starts from the positions taken then.
        if (!this.running) return;
        this.failures = 0;
        this.options.onRead();
        this.deliver(batches);
        if (batches.length > 0) await sleepOn(this.options.clock, coalesceDelayMs(keys.length));
      } catch (thrown) {
        this.abortRead = null;
        this.inFlight = false;
        if (!this.running) return;
        const error = toError(thrown);
        this.options.onError(error);
        if (isWrongType(error)) {
          const dropped = await this.options.onWrongType(keys);
          for (const key of dropped) if (this.cursors.delete(key)) this.keysChanged = true;
          if (dropped.length > 0) continue;
        }
        this.failures++;
        await sleepOn(this.options.clock, backoffDelay(this.failures, 50, 5_000));
      }
    }
  }

  private deliver(batches: readonly XreadBatch[]): void {
    for (const [stream, entries] of batches) {
      const last = entries[entries.length - 1];
      const current = this.cursors.get(stream);
      // A stream removed or restarted while the read was out is skipped.
      if (last === undefined || current === undefined || this.restartedDuringRead.has(stream)) continue;
      if (this.options.vanished?.(stream) === true) {
        // The cursor stays: the next read returns these again, until the look restarts the key.
        this.options.onSuspect?.(stream);
        continue;
      }
      if (compareStreamIds(last.id, current) > 0) this.cursors.set(stream, last.id);
      try {
        this.options.onEntries(stream, entries);
      } catch (thrown) {
        // The cursor has moved on: a throwing listener must be loud, never a silent gap.
        this.options.onError(toError(thrown));
      }
    }
  }
}
