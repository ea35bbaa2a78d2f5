import type { AdapterRun, RunContext, UpstreamAdapter } from '@streamgate/ingest-core';
import type { ChainConfig, StreamSpec } from '../config.js';
import { CountingEvmEvents } from './CountingEvmEvents.js';
import type { EvmStreamCounts } from './CountingEvmEvents.js';
import type { EvmRunEvents } from './evmEvents.js';
import type { EvmRunView } from './EvmRunView.js';
import { EvmStreamRun } from './EvmStreamRun.js';
import type { ProviderPool } from './ProviderPool.js';

/** One stream as the operations snapshot shows it: its current run and its counts since start. */
export type EvmStreamView = EvmRunView & EvmStreamCounts & { readonly stream: string; readonly chain: string };

/** The EVM upstream kind for one configured stream (newHeads or a logs filter). */
export class EvmAdapter implements UpstreamAdapter {
  readonly kind = 'evm';
  private readonly events: CountingEvmEvents;
  private run: EvmStreamRun | null = null;

  constructor(
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: ProviderPool,
    events: EvmRunEvents,
  ) {
    this.events = new CountingEvmEvents(events);
  }

  start(ctx: RunContext): AdapterRun {
    const run = new EvmStreamRun(ctx, this.spec, this.chain, this.pool, this.events).start();
    this.run = run;
    // A halted run stays: the worker keeps its lease, and the snapshot shows it until released.
    void run.ended.then((end) => {
      if (end.reason !== 'halted' && this.run === run) this.run = null;
    });
    return run;
  }

  /**
   * The latest run's view, null when none runs. Read it only for keys the worker owns: a halted
   * run is kept here after the worker let the key go, until the key is taken again.
   */
  view(): EvmStreamView | null {
    if (this.run === null) return null;
    return { stream: this.spec.stream, chain: this.spec.chain, ...this.run.view(), ...this.events.counts };
  }
}
