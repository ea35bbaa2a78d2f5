import type { AdapterRun, RunContext, UpstreamAdapter } from '@streamgate/ingest-core';
import type { ChainConfig, StreamSpec } from '../config.js';
import type { EvmRunEvents } from './evmEvents.js';
import { EvmStreamRun } from './EvmStreamRun.js';
import type { ProviderPool } from './ProviderPool.js';

/** The EVM upstream kind for one configured stream (newHeads or a logs filter). */
export class EvmAdapter implements UpstreamAdapter {
  readonly kind = 'evm';

  constructor(
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: ProviderPool,
    private readonly events: EvmRunEvents,
  ) {}

  start(ctx: RunContext): AdapterRun {
    return new EvmStreamRun(ctx, this.spec, this.chain, this.pool, this.events);
  }
}
