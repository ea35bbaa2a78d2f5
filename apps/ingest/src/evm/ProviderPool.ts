import type { z } from 'zod';
import { systemClock } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import type { ProviderConfig } from '../config.js';
import { HttpRpcClient } from './HttpRpcClient.js';
import type { ProviderReader } from './LogRangeFetcher.js';
import { LogSpanBook } from './LogSpanBook.js';
import type { RpcError, RpcResult } from './RpcError.js';

interface HttpStats {
  client: HttpCaller;
  /** Exponentially weighted latency of successful calls, ms; null before the first one. */
  latencyMs: number | null;
  failedUntil: number;
}

/** What the chain follower reads from: JSON-RPC over HTTP, parsed, with a provider to avoid. */
export interface RpcReader extends ProviderReader {
  call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S, avoid?: string): Promise<RpcResult<z.output<S>>>;
}

/** What a stream run uses of a chain's providers: HTTP reads, and WebSocket candidates by priority. */
export interface EvmProviders extends RpcReader {
  wsCandidates(exclude: ReadonlySet<string>): ProviderConfig[];
}

/** How an HTTP provider is reached: the seam the pool's unit tests replace with a fake. */
export type HttpCaller = Pick<HttpRpcClient, 'provider' | 'call'>;
export type OpenHttpCaller = (provider: string, url: string, timeoutMs: number) => HttpCaller;

/**
 * A chain's providers. WebSocket subscriptions go by configured priority; HTTP calls (gap-fill,
 * the head oracle) go to the fastest healthy HTTP endpoint, chosen independently, because the
 * best socket for pushes is not necessarily the best endpoint for bulk reads.
 */
export class ProviderPool implements EvmProviders {
  private readonly http: HttpStats[];
  /** The eth_getLogs span each HTTP provider accepts, learned from its refusals. */
  readonly logSpans = new LogSpanBook();

  constructor(
    readonly providers: readonly ProviderConfig[],
    timeoutMs: number,
    private readonly cooldownMs: number,
    private readonly onError: (error: RpcError) => void,
    private readonly clock: Clock = systemClock,
    openHttp: OpenHttpCaller = (id, url, ms) => new HttpRpcClient(id, url, ms),
  ) {
    this.http = providers.flatMap((p) =>
      p.httpUrl === undefined ? [] : [{ client: openHttp(p.id, p.httpUrl, timeoutMs), latencyMs: null, failedUntil: 0 }],
    );
  }

  /** WebSocket providers in priority order, those in `exclude` last (a cascade may come back to them). */
  wsCandidates(exclude: ReadonlySet<string>): ProviderConfig[] {
    return this.providers
      .filter((p) => p.wsUrl !== undefined)
      .sort((a, b) => Number(exclude.has(a.id)) - Number(exclude.has(b.id)) || a.priority - b.priority);
  }

  /** HTTP endpoints, healthy ones first by latency; `avoid` (e.g. the failing socket's provider) last. */
  private httpOrder(avoid?: string): HttpStats[] {
    const now = this.clock.now();
    const rank = (s: HttpStats) => (s.failedUntil > now ? 2 : 0) + (s.client.provider === avoid ? 1 : 0);
    return [...this.http].sort((a, b) => rank(a) - rank(b) || (a.latencyMs ?? 0) - (b.latencyMs ?? 0));
  }

  httpProviderIds(avoid?: string): string[] {
    return this.httpOrder(avoid).map((s) => s.client.provider);
  }

  /** One call on one HTTP provider, counted in its health and latency. */
  async callOn<S extends z.ZodType>(
    provider: string,
    method: string,
    params: readonly unknown[],
    schema: S,
  ): Promise<RpcResult<z.output<S>>> {
    const stats = this.http.find((s) => s.client.provider === provider);
    if (stats === undefined)
      return { ok: false, error: { code: 'unreachable', retryable: true, provider, message: 'no such HTTP provider' } };
    return this.callStats(stats, method, params, schema);
  }

  /** Tries each HTTP endpoint in order until one answers; the last error if none does. */
  async call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S, avoid?: string): Promise<RpcResult<z.output<S>>> {
    let last: RpcResult<z.output<S>> = {
      ok: false,
      error: { code: 'unreachable', retryable: true, provider: 'none', message: 'no HTTP provider' },
    };
    for (const stats of this.httpOrder(avoid)) {
      last = await this.callStats(stats, method, params, schema);
      if (last.ok) return last;
    }
    return last;
  }

  private async callStats<S extends z.ZodType>(
    stats: HttpStats,
    method: string,
    params: readonly unknown[],
    schema: S,
  ): Promise<RpcResult<z.output<S>>> {
    const started = this.clock.now();
    const result = await stats.client.call(method, params, schema);
    if (result.ok) {
      const took = this.clock.now() - started;
      stats.latencyMs = stats.latencyMs === null ? took : stats.latencyMs * 0.8 + took * 0.2;
      return result;
    }
    // A node's own JSON-RPC error (e.g. unknown block) says nothing about the endpoint's health.
    if (result.error.code !== 'rpc_error') stats.failedUntil = this.clock.now() + this.cooldownMs;
    this.onError(result.error);
    return result;
  }
}
