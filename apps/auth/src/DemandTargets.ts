import { isJetStreamTarget } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import type { DemandSink } from '@streamgate/demand';

/** A demand sink on one target, and how to let go of its connection. */
export interface TargetDemandSink extends DemandSink {
  close(): void;
}

/**
 * Registers demand in each stream's own Redis: ingest keeps its demand set beside the streams it
 * writes, on `placeStream(stream, targets)`, the target the stream's token names. A stream whose
 * token names a JetStream target has no Redis of its own: its demand goes to
 * `jetStreamDemandTarget`, the Redis its ingest reads demand from (one connection per Redis,
 * whichever streams it serves). A target's connection opens on the first registration for a
 * stream placed there, so a down instance delays only its own streams' registrations.
 */
export class DemandTargets {
  private readonly sinks = new Map<string, TargetDemandSink>();
  private readonly targets: readonly string[];
  private readonly open: (target: string) => TargetDemandSink;
  private readonly jetStreamDemandTarget: string | null;

  /**
   * `targets` normalized, the issuer's list; `open` makes the sink of one Redis target;
   * `jetStreamDemandTarget` (normalized) takes the demand of streams placed on a JetStream target.
   */
  constructor(targets: readonly string[], open: (target: string) => TargetDemandSink, jetStreamDemandTarget: string | null = null) {
    this.targets = targets;
    this.open = open;
    this.jetStreamDemandTarget = jetStreamDemandTarget;
  }

  /** Marks `stream` wanted for `ttlMs` in its target's demand set. */
  register(stream: string, ttlMs: number): Promise<void> {
    const placed = placeStream(stream, this.targets);
    const target = isJetStreamTarget(placed) ? this.jetStreamDemandTarget : placed;
    // Config requires the demand target whenever a JetStream target takes demand.
    if (target === null) return Promise.reject(new Error(`no AUTH_JETSTREAM_DEMAND_TARGET for ${stream} on ${placed}`));
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
