import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { ProviderReader } from './LogRangeFetcher.js';
import { LogRangeFetcher } from './LogRangeFetcher.js';
import { LogSpanBook } from './LogSpanBook.js';
import { rangeRefusal } from './rangeRefusal.js';
import type { RpcError, RpcResult } from './RpcError.js';

const hex = (n: number) => `0x${n.toString(16)}`;
const h32 = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

interface Limit {
  maxBlocks: number;
  code: number;
  message: string;
}

/** Providers over one chain of `height` blocks with one log each, each refusing ranges over its limit. */
class RefusingProviders implements ProviderReader {
  readonly logSpans: LogSpanBook;
  readonly calls: { provider: string; width: number; refused: boolean }[] = [];
  down = new Set<string>();

  constructor(
    private readonly limits: Record<string, Limit>,
    now: () => number = Date.now,
  ) {
    this.logSpans = new LogSpanBook(now);
  }

  httpProviderIds(avoid?: string): string[] {
    return Object.keys(this.limits).sort((a, b) => Number(a === avoid) - Number(b === avoid));
  }

  callOn<S extends z.ZodType>(provider: string, _method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    const filter = params[0] as { fromBlock: string; toBlock: string };
    const from = Number.parseInt(filter.fromBlock, 16);
    const to = Number.parseInt(filter.toBlock, 16);
    const limit = this.limits[provider];
    if (this.down.has(provider) || limit === undefined) {
      return Promise.resolve({ ok: false, error: { code: 'unreachable', retryable: true, provider, message: 'down' } });
    }
    const refused = to - from + 1 > limit.maxBlocks;
    this.calls.push({ provider, width: to - from + 1, refused });
    if (refused) {
      return Promise.resolve({
        ok: false,
        error: { code: 'rpc_error', retryable: true, provider, message: `eth_getLogs: ${limit.message}`, rpcCode: limit.code },
      });
    }
    const logs = Array.from({ length: to - from + 1 }, (_, i) => ({
      address: h32(1).slice(0, 42),
      topics: [],
      data: '0x',
      blockNumber: hex(from + i),
      blockHash: h32(from + i),
      transactionHash: h32(from + i),
      transactionIndex: '0x0',
      logIndex: '0x0',
    }));
    const parsed = schema.safeParse(logs);
    if (!parsed.success) throw new Error('bad fake logs');
    return Promise.resolve({ ok: true, value: parsed.data });
  }
}

const rpc = (message: string, rpcCode: number): RpcError => ({
  code: 'rpc_error',
  retryable: true,
  provider: 'p',
  message: `eth_getLogs: ${message}`,
  rpcCode,
});

describe('rangeRefusal', () => {
  it.each([
    ['query returned more than 10000 results', -32005, undefined],
    ['block range too large', -32602, undefined],
    ['exceed maximum block range: 5000', -32000, 5000],
    ['eth_getLogs is limited to a 10,000 range', -32614, 10_000],
    [
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range. Based on your parameters, this block range should work: [0x10, 0x2f]',
      -32602,
      32,
    ],
    ['query exceeds max block range 100000', -32602, 100_000],
    ['query exceeds max results 20000, retry with the range 1-7', -32602, undefined],
    ['Requested range exceeds maximum range limit', -32005, undefined],
  ])('recognises %j (code %i)', (message, code, span) => {
    expect(rangeRefusal(rpc(message, code))).toEqual(span === undefined ? {} : { spanHint: span });
  });

  it.each([
    ['project ID request rate exceeded', -32005],
    ['daily request count exceeded, request rate limited', -32005],
    ['invalid argument 0: hex string without 0x prefix', -32602],
    ['too many requests', -32000],
  ])('does not take %j for a range refusal', (message, code) => {
    expect(rangeRefusal(rpc(message, code))).toBeNull();
  });
});

describe('LogRangeFetcher', () => {
  it('bisects a refused range, then keeps to the learned span for the next queries', async () => {
    const providers = new RefusingProviders({ p: { maxBlocks: 6, code: -32005, message: 'query returned more than 10000 results' } });
    const refusals: string[] = [];
    const fetcher = new LogRangeFetcher(providers, 100, (_p, from, to) => refusals.push(`${from}-${to}`));
    const first = await fetcher.fetch(0, 63, {});
    expect(first.ok && first.value.logs.map((l) => l.blockNumber)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(refusals).toEqual(['0-63', '0-31', '0-15', '0-7']);
    providers.calls.length = 0;
    const second = await fetcher.fetch(64, 199, {});
    expect(second.ok && second.value.logs).toHaveLength(136);
    // Growing back probes the limit once at most, then stays under it.
    expect(providers.calls.filter((c) => c.refused).length).toBeLessThanOrEqual(1);
    providers.calls.length = 0;
    await fetcher.fetch(200, 399, {});
    expect(providers.calls.filter((c) => c.refused)).toHaveLength(0);
    expect(providers.calls.length).toBeLessThanOrEqual(Math.ceil(200 / 5) + 1);
  });

  it('grows the span back after a run of successes, but never to a width refused recently', async () => {
    let now = 0;
    const providers = new RefusingProviders({ p: { maxBlocks: 40, code: -32602, message: 'block range too large' } }, () => now);
    const fetcher = new LogRangeFetcher(providers, 100, () => undefined);
    await fetcher.fetch(0, 99, {}); // refused at 100 and 50, then 25 at a time
    expect(providers.logSpans.span('p', 100)).toBe(25);
    await fetcher.fetch(100, 2_099, {});
    const span = providers.logSpans.span('p', 100);
    expect(span).toBeGreaterThan(25);
    expect(span).toBeLessThanOrEqual(40);
    // Refused within the last ten minutes: the span does not probe past the limit again and again.
    expect(providers.calls.filter((c) => c.refused).length).toBeLessThanOrEqual(4);
    now += 11 * 60_000;
    providers.calls.length = 0;
    // Ten minutes on, the limit is probed again: found anew by halving the distance.
    await fetcher.fetch(3_000, 4_999, {});
    expect(providers.calls.filter((c) => c.refused).length).toBeLessThanOrEqual(6);
    providers.calls.length = 0;
    await fetcher.fetch(5_000, 6_999, {});
    expect(providers.calls.filter((c) => c.refused)).toHaveLength(0);
    expect(providers.logSpans.span('p', 100)).toBe(40);
  });

  it('uses the span a provider names, and learns each provider apart', async () => {
    const providers = new RefusingProviders({
      a: { maxBlocks: 10, code: -32000, message: 'exceed maximum block range: 10' },
      b: { maxBlocks: 3, code: -32602, message: 'block range too large' },
    });
    const fetcher = new LogRangeFetcher(providers, 100, () => undefined);
    await fetcher.fetch(0, 49, {});
    expect(providers.logSpans.span('a', 100)).toBe(10);
    expect(providers.calls.filter((c) => c.refused)).toHaveLength(1);
    providers.down.add('a');
    const viaB = await fetcher.fetch(50, 69, {});
    expect(viaB.ok && viaB.value.logs).toHaveLength(20);
    expect(providers.logSpans.span('b', 100)).toBeLessThanOrEqual(3);
    expect(providers.logSpans.span('a', 100)).toBe(10);
  });

  it('reports a block refused even alone instead of retrying it', async () => {
    const providers = new RefusingProviders({ p: { maxBlocks: 0, code: -32005, message: 'query returned more than 10000 results' } });
    const fetcher = new LogRangeFetcher(providers, 4, () => undefined);
    const result = await fetcher.fetch(0, 3, {});
    expect(result.ok && result.value.refusedBlocks).toEqual([0, 1, 2, 3]);
    expect(providers.calls.length).toBeLessThan(12);
  });
});
