import { backoffDelay } from '@streamgate/protocol';
import type { RunContext, RunEnd } from '@streamgate/ingest-core';
import { SequenceEpochs } from './SequenceEpochs.js';
import type { SequencedPayload, SequenceRestart } from './SequenceEpochs.js';
import type { VenuePayload } from './venueSchemas.js';

export interface SymbolWriterEvents {
  dropped?(count: number): void;
  /** Entries XADDed to `stream`, and payloads skipped there as already written. */
  written?(stream: string, count: number): void;
  duplicates?(stream: string, count: number): void;
  /** The venue's numbering for one kind of `stream`'s symbol restarted (SequenceEpochs). */
  sequenceRestart?(stream: string, restart: SequenceRestart): void;
}

/**
 * Writes one symbol's payloads to its stream through the core's fenced, deduplicated writer:
 * one write in flight, everything that arrived meanwhile goes in the next batch. The dedupe id is
 * the venue's own `<kind>:<seq>` (with its numbering's epoch after a venue restart,
 * SequenceEpochs), so the same print arriving over two sessions (a symbol moving shards) or from
 * two owners lands once.
 */
export class SymbolWriter {
  private buffer: SequencedPayload[] = [];
  private readonly epochs: SequenceEpochs;
  private writing = false;
  private retry = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly maxBuffer: number,
    private readonly end: (end: RunEnd) => void,
    private readonly events: SymbolWriterEvents = {},
  ) {
    this.epochs = new SequenceEpochs(ctx.state);
  }

  push(payload: VenuePayload): void {
    if (this.done) return;
    const { write, restart } = this.epochs.next(payload);
    if (restart !== undefined) this.events.sequenceRestart?.(this.ctx.key, restart);
    this.buffer.push(write);
    this.bound();
    this.flush();
  }

  private bound(): void {
    if (this.buffer.length <= this.maxBuffer) return;
    // Redis has been refusing writes long enough to fill the buffer: live market data past
    // this point is dropped oldest-first and counted, rather than growing without bound.
    const excess = this.buffer.length - this.maxBuffer;
    this.buffer.splice(0, excess);
    this.events.dropped?.(excess);
  }

  stop(): void {
    this.done = true;
    clearTimeout(this.retryTimer);
  }

  private flush(): void {
    if (this.writing || this.done || this.retryTimer !== undefined || this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = true;
    const stateSet: Record<string, string> = {};
    for (const w of batch) stateSet[w.stateKey] = w.stateValue;
    void this.ctx
      .write({ entries: batch.map((w) => ({ dedupeId: w.dedupeId, data: JSON.stringify(w.payload) })), stateSet })
      .then((outcome) => {
        this.writing = false;
        // Stopped meanwhile: the owner already ended the run; nothing is retried or reported.
        if (this.done) return;
        if (outcome.ok) {
          if (outcome.written > 0) this.events.written?.(this.ctx.key, outcome.written);
          if (outcome.duplicates > 0) this.events.duplicates?.(this.ctx.key, outcome.duplicates);
          this.retry = 0;
          return this.flush();
        }
        if (!outcome.error.retryable) {
          this.done = true;
          return this.end(
            outcome.error.code === 'fenced'
              ? { reason: 'fenced' }
              : outcome.error.code === 'stopped'
                ? { reason: 'stopped' }
                : { reason: 'failed', error: outcome.error },
          );
        }
        this.buffer = batch.concat(this.buffer);
        this.bound();
        this.retryTimer = setTimeout(
          () => {
            this.retryTimer = undefined;
            this.flush();
          },
          backoffDelay(this.retry++, 100, 5_000),
        );
      })
      .catch((error: unknown) => {
        this.writing = false;
        if (this.done) return;
        this.done = true;
        this.end({ reason: 'failed', error: { code: 'redis_unavailable', retryable: true, message: String(error) } });
      });
  }
}
