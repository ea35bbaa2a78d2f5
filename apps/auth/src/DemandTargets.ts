import { placeStream } from '@streamgate/redis';
import type { DemandSink } from '@streamgate/demand';

/** A demand sink on one target, and how to let go of its connection. */
export interface TargetDemandSink extends DemandSink {
  close(): void;
}

/**
 * Registers demand in each stream's own Redis: ingest keeps its demand set beside the streams it
 * writes, on `placeStream(stream, targets)`, the target the stream's token names. A target's
 * connection opens on the first registration for a stream placed there, so a down instance
 * delays only its own streams' registrations.
 */
export class DemandTargets {
  private readonly sinks = new Map<string, TargetDemandSink>();
  private readonly targets: readonly string[];
  private readonly open: (target: string) => TargetDemandSink;

  /** `targets` normalized, the issuer's list; `open` makes the sink of one target. */
  constructor(targets: readonly string[], open: (target: string) => TargetDemandSink) {
    this.targets = targets;
    this.open = open;
  }

  /** Marks `stream` wanted for `ttlMs` on its target. */
  register(stream: string, ttlMs: number): Promise<void> {
    const target = placeStream(stream, this.targets);
    let sink = this.sinks.get(target);
    if (sink === undefined) {
      sink = this.open(target);
      this.sinks.set(target, sink);
    }
    return sink.heartbeat([stream], ttlMs);
  }

  close(): void {
    for (const sink of this.sinks.values()) sink.close();
    this.sinks.clear();
  }
}
