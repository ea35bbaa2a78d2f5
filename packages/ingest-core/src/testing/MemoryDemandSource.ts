import type { DemandSource } from '@streamgate/demand';

export class MemoryDemandSource implements DemandSource {
  readonly keys = new Set<string>();
  failing = false;

  async demanded(): Promise<ReadonlySet<string>> {
    await Promise.resolve();
    if (this.failing) throw new Error('demand store unavailable');
    return new Set(this.keys);
  }
}
