import { placeStream } from '@streamgate/redis';
import type { DemandSource } from '@streamgate/demand';
import { UnitedDemandSource } from '@streamgate/demand';
import type { Fence, Lease, LeaseStore, StreamWriter, WriteBatch, WriteOutcome } from '@streamgate/ingest-core';

/** What ingest keeps on one target: the stream writer, the leases and the demand registry there. */
export interface TargetStores {
  readonly writer: StreamWriter;
  readonly leases: LeaseStore;
  readonly demand: DemandSource;
}

/**
 * The Redis targets this worker writes to, and which holds each stream. With one target (an
 * instance or a Redis Cluster) everything goes there; with several instances a stream is written,
 * leased, checkpointed and deduplicated on placeStream(stream, targets), the function the issuer
 * and the publisher place it by, so it is written where its tokens say. `writer` and `leases`
 * route each call by its stream; demand is read from every target and united.
 */
export class IngestRedisTargets {
  private readonly list: readonly string[];
  readonly writer: StreamWriter;
  readonly leases: LeaseStore;

  constructor(private readonly stores: ReadonlyMap<string, TargetStores>) {
    if (stores.size === 0) throw new RangeError('IngestRedisTargets needs at least one target');
    this.list = [...stores.keys()];
    const of = (stream: string): TargetStores => this.storesOf(stream);
    this.writer = {
      write: (fence: Fence, batch: WriteBatch): Promise<WriteOutcome> => of(fence.key).writer.write(fence, batch),
      loadState: (fence: Fence) => of(fence.key).writer.loadState(fence),
    };
    this.leases = {
      acquire: (key: string, owner: string, ttlMs: number) => of(key).leases.acquire(key, owner, ttlMs),
      renew: (lease: Lease, owner: string, ttlMs: number) => of(lease.key).leases.renew(lease, owner, ttlMs),
      release: (lease: Lease, owner: string) => of(lease.key).leases.release(lease, owner),
    };
  }

  get targets(): readonly string[] {
    return this.list;
  }

  /** The target holding `stream`. */
  targetOf(stream: string): string {
    return this.list.length === 1 ? (this.list[0] ?? '') : placeStream(stream, this.list);
  }

  private storesOf(stream: string): TargetStores {
    const stores = this.stores.get(this.targetOf(stream));
    if (stores === undefined) throw new Error(`no stores for the target of ${stream}`); // unreachable: targetOf picks from stores' keys
    return stores;
  }

  /** Demand of every target, united; a target that cannot be read is reported and skipped. */
  demand(onError: (target: string, error: unknown) => void): DemandSource {
    return new UnitedDemandSource(
      [...this.stores].map(([name, stores]) => ({ name, source: stores.demand })),
      onError,
    );
  }
}
