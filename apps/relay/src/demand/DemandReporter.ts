import type { DemandSink } from '@streamgate/demand';
import type { StreamName } from '@streamgate/protocol';

export interface DemandTarget {
  readonly target: string;
  /** Where demand goes for this Redis target (RedisDemandRegistry at the edge). */
  readonly sink: DemandSink;
  /** Streams with subscribers on this pod right now. */
  streams(): StreamName[];
}

export interface DemandReporterOptions {
  readonly targets: readonly DemandTarget[];
  /** Only streams whose name starts with one of these are ingest-backed and reported. */
  readonly prefixes: readonly string[];
  readonly intervalMs: number;
  readonly ttlMs: number;
  readonly onError: (target: string, error: unknown) => void;
  /** After a heartbeat was sent to `target` carrying `streams` streams, or with 0 when it had none to carry. */
  readonly onReport?: (target: string, streams: number) => void;
}

/**
 * Tells ingest which of its streams have live subscribers on this pod: every interval, one
 * heartbeat per Redis target carrying every such stream (a target's `streams` may include other
 * targets' streams, see demandFeeds), valid for `ttlMs`. A pod that dies
 * simply stops beating, and demand expires; N subscribers on any number of pods are one member.
 */
export class DemandReporter {
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: DemandReporterOptions) {
    this.timer = setInterval(() => void this.report(), options.intervalMs);
    this.timer.unref();
    void this.report();
  }

  async report(): Promise<void> {
    const { prefixes, ttlMs } = this.options;
    await Promise.all(
      this.options.targets.map(async (t) => {
        const { target, sink } = t;
        const wanted = t.streams().filter((s) => prefixes.some((p) => s.startsWith(p)));
        if (wanted.length === 0) {
          this.options.onReport?.(target, 0);
          return;
        }
        try {
          await sink.heartbeat(wanted, ttlMs);
        } catch (error) {
          this.options.onError(target, error);
          return;
        }
        this.options.onReport?.(target, wanted.length);
      }),
    );
  }

  close(): void {
    clearInterval(this.timer);
  }
}
