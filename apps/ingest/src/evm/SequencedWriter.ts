import { z } from 'zod';
import { backoffDelay } from '@streamgate/protocol';
import { sleepOn, systemClock } from '@streamgate/protocol';
import type { RunContext, WriteBatch } from '@streamgate/ingest-core';
import type { Clock } from '@streamgate/protocol';
import type { EvmRunEvents } from './evmEvents.js';
import { RunStop } from './RunStop.js';

/** How many entries this stream has been given so far: the position of the next one. */
const SEQ = 'seq';

/** One stream's writes, each entry's dedupe id prefixed with its position in the stream. */
export class SequencedWriter {
  private seq: number;

  constructor(
    private readonly ctx: RunContext,
    private readonly stream: string,
    private readonly events: EvmRunEvents,
    private readonly clock: Clock = systemClock,
  ) {
    this.seq = z.coerce
      .number()
      .int()
      .nonnegative()
      .parse(ctx.state.get(SEQ) ?? '0');
  }

  /**
   * The atomic write, retried with backoff while the log (Redis or JetStream) is unreachable. Each entry's dedupe id is
   * its position in the stream's sequence of entries followed by what it is: a chain that flips
   * back to a branch written earlier must write the same log again after its retraction, so the
   * content alone cannot identify a write. The position moves on in the same script as the
   * entries, so a retry of an unanswered write (same positions) or a successor resuming from
   * the saved state still cannot write anything twice.
   */
  async write(batch: WriteBatch): Promise<void> {
    const first = this.seq;
    const positioned: WriteBatch = {
      entries: batch.entries.map((e, i) => ({ dedupeId: `${first + i}:${e.dedupeId}`, data: e.data })),
      stateSet: { ...batch.stateSet, [SEQ]: String(first + batch.entries.length) },
      ...(batch.stateDel === undefined ? {} : { stateDel: batch.stateDel }),
    };
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.ctx.write(positioned);
      if (outcome.ok) {
        this.seq = first + batch.entries.length;
        if (outcome.duplicates > 0) this.events.dedupeHits(this.stream, 'log', outcome.duplicates);
        this.events.written(this.stream, outcome.written);
        return;
      }
      const { error } = outcome;
      switch (error.code) {
        case 'fenced':
          throw new RunStop({ reason: 'fenced' });
        case 'stopped':
          throw new RunStop({ reason: 'stopped' });
        case 'wrong_type':
        case 'stream_untaggable':
        case 'stream_invalid':
        case 'jetstream_rejected':
        case 'upstream_garbage':
        case 'upstream_unavailable':
        case 'upstream_refused':
          throw new RunStop({ reason: 'failed', error });
        case 'redis_unavailable':
        case 'jetstream_unavailable':
          if (this.ctx.signal.aborted) throw new RunStop({ reason: 'stopped' });
          await sleepOn(this.clock, backoffDelay(attempt, 100, 5_000), this.ctx.signal);
          break;
        default: {
          // A code added to IngestError must be placed above: otherwise this loop would spin on it.
          const unhandled: never = error;
          throw new RunStop({ reason: 'failed', error: unhandled });
        }
      }
    }
  }
}
