import type { ProviderConfig } from '../config.js';
import type { EvmProviders } from './ProviderPool.js';
import { quantitySchema } from './rpcSchemas.js';

/**
 * The failback hold-down: while the run is on another provider, the preferred one must look
 * healthy at every head poll for `holdMs` in a row before the run moves back to it. A provider
 * that flaps never stays healthy that long, so the stream does not flap with it. Healthy: its
 * HTTP head within `lagBlocks` of the oracle's; one with no HTTP endpoint is judged by its
 * subscribe alone.
 */
export class FailbackHold {
  private healthySince: number | null = null;

  constructor(
    readonly preferred: ProviderConfig | null,
    private readonly pool: EvmProviders,
    private readonly holdMs: number,
    private readonly lagBlocks: number,
  ) {}

  /** Probes the preferred once; true once it has been healthy for the whole hold-down. */
  async due(oracleHead: number, now: () => number): Promise<boolean> {
    const preferred = this.preferred;
    if (preferred === null) return false;
    let healthy = true;
    if (preferred.httpUrl !== undefined) {
      const head = await this.pool.callOn(preferred.id, 'eth_blockNumber', [], quantitySchema);
      healthy = head.ok && oracleHead - head.value < this.lagBlocks;
    }
    if (!healthy) {
      this.healthySince = null;
      return false;
    }
    this.healthySince ??= now();
    return now() - this.healthySince >= this.holdMs;
  }

  /** Starts the hold-down over: on leaving the preferred, and after a failback that did not take. */
  reset(): void {
    this.healthySince = null;
  }
}
