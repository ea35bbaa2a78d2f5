import type { IngestLogEvent } from '@streamgate/ingest-events';
import type { ChainConfig, StreamSpec } from '../config.js';
import type { EvmRunEvents } from './evmEvents.js';
import { LogRangeFetcher } from './LogRangeFetcher.js';
import type { RpcReader } from './ProviderPool.js';
import { rangeRefusal } from './rangeRefusal.js';
import { RpcFailure } from './RpcError.js';
import { rpcLogSchema } from './rpcSchemas.js';
import type { BlockHeader, RpcLog } from './rpcSchemas.js';

/** A logs stream's reads: one block's logs by hash, or a backfill's by range (split as providers demand). */
export class BlockLogReader {
  private readonly ranges: LogRangeFetcher;

  constructor(
    private readonly pool: RpcReader,
    private readonly spec: StreamSpec,
    chain: ChainConfig,
    events: EvmRunEvents,
  ) {
    this.ranges = new LogRangeFetcher(pool, chain.getLogsRangeBlocks, (provider, from, to, message) =>
      events.providerError(provider, 'range_refused', `eth_getLogs ${from}..${to} refused: ${message}`),
    );
  }

  /** Logs of blocks `from`..`to` of the node's chain, and the blocks no provider would serve by range. */
  async forRange(from: number, to: number): Promise<{ logs: IngestLogEvent[]; refusedBlocks: readonly number[] }> {
    const fetched = await this.ranges.fetch(from, to, this.spec.filter ?? {});
    if (!fetched.ok) throw new RpcFailure(fetched.error);
    return { logs: this.toLogEvents(fetched.value.logs), refusedBlocks: fetched.value.refusedBlocks };
  }

  async forBlock(block: BlockHeader): Promise<IngestLogEvent[]> {
    const result = await this.pool.call('eth_getLogs', [{ blockHash: block.hash, ...(this.spec.filter ?? {}) }], rpcLogSchema.array());
    if (result.ok) return this.toLogEvents(result.value);
    if (rangeRefusal(result.error) === null) throw new RpcFailure(result.error);
    // Too many logs for any provider even as one block: nothing narrower exists to ask for.
    throw new RpcFailure({
      code: 'range_refused',
      retryable: false,
      provider: result.error.provider,
      message: `the logs of block ${block.number} (${block.hash}) are refused by every provider: ${result.error.message}`,
      fromBlock: block.number,
      toBlock: block.number,
    });
  }

  private toLogEvents(logs: readonly RpcLog[]): IngestLogEvent[] {
    return [...logs]
      .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)
      .map((log) => ({ type: 'log', chain: this.spec.chain, ...log, removed: false }));
  }
}
