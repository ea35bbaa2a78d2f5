import type { LogSpanBook } from './LogSpanBook.js';
import { rangeRefusal } from './rangeRefusal.js';
import type { RpcError, RpcResult } from './RpcError.js';
import { rpcLogSchema } from './rpcSchemas.js';
import type { RpcLog } from './rpcSchemas.js';
import type { z } from 'zod';

/** The provider-addressed reads a range fetch needs (ProviderPool in production). */
export interface ProviderReader {
  /** HTTP provider ids in the order calls should try them, `avoid` last. */
  httpProviderIds(avoid?: string): readonly string[];
  callOn<S extends z.ZodType>(provider: string, method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>>;
  readonly logSpans: LogSpanBook;
}

export interface LogRange {
  readonly logs: readonly RpcLog[];
  /** Blocks no provider would serve even as a one-block range: fetch them by hash instead. */
  readonly refusedBlocks: readonly number[];
}

const toHex = (n: number) => `0x${n.toString(16)}`;

/**
 * eth_getLogs over a block range, split to what each provider accepts: a refused range is
 * bisected (or cut to the span the provider named) and the accepted span is remembered per
 * provider, so the next query starts at a width that works. A provider failing in any other way
 * hands the rest of the range to the next one, as single calls do.
 */
export class LogRangeFetcher {
  constructor(
    private readonly reader: ProviderReader,
    private readonly maxSpan: number,
    private readonly onRefused: (provider: string, fromBlock: number, toBlock: number, message: string) => void,
  ) {}

  async fetch(from: number, to: number, filter: Readonly<Record<string, unknown>>, avoid?: string): Promise<RpcResult<LogRange>> {
    const book = this.reader.logSpans;
    const providers = this.reader.httpProviderIds(avoid);
    const pending: [number, number][] = [[from, to]];
    const logs: RpcLog[] = [];
    const refusedBlocks: number[] = [];
    let index = 0;
    let lastError: RpcError = { code: 'unreachable', retryable: true, provider: 'none', message: 'no HTTP provider' };
    for (let range = pending.shift(); range !== undefined; range = pending.shift()) {
      const provider = providers[index];
      if (provider === undefined) return { ok: false, error: lastError };
      const [a, b] = range;
      const width = b - a + 1;
      const span = book.span(provider, this.maxSpan);
      if (width > span) {
        pending.unshift([a, a + span - 1], [a + span, b]);
        continue;
      }
      const result = await this.reader.callOn(
        provider,
        'eth_getLogs',
        [{ ...filter, fromBlock: toHex(a), toBlock: toHex(b) }],
        rpcLogSchema.array(),
      );
      if (result.ok) {
        book.accepted(provider, width, this.maxSpan);
        logs.push(...result.value);
        continue;
      }
      const refusal = rangeRefusal(result.error);
      if (refusal === null) {
        lastError = result.error;
        pending.unshift(range);
        index += 1;
        continue;
      }
      this.onRefused(provider, a, b, result.error.message);
      if (width === 1) refusedBlocks.push(a);
      else {
        book.refused(provider, width, this.maxSpan, refusal.spanHint);
        pending.unshift(range);
      }
    }
    return { ok: true, value: { logs, refusedBlocks } };
  }
}
