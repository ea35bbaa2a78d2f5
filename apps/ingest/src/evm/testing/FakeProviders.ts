import type { z } from 'zod';
import type { ProviderConfig } from '../../config.js';
import type { LogSpanBook } from '../LogSpanBook.js';
import type { EvmProviders } from '../ProviderPool.js';
import type { RpcResult } from '../RpcError.js';
import type { FakeChain } from './FakeChain.js';

/**
 * A chain's providers over one in-memory chain: every HTTP read answers from it, except on a
 * provider the test took down, and WebSocket candidates go by priority as in ProviderPool.
 */
export class FakeProviders implements EvmProviders {
  readonly logSpans: LogSpanBook;
  private readonly down = new Set<string>();

  constructor(
    private readonly chain: FakeChain,
    readonly providers: readonly ProviderConfig[],
  ) {
    this.logSpans = chain.logSpans;
  }

  /** The provider's HTTP endpoint stops answering (or answers again). */
  httpDown(provider: string, down = true): void {
    if (down) this.down.add(provider);
    else this.down.delete(provider);
  }

  wsCandidates(exclude: ReadonlySet<string>): ProviderConfig[] {
    return this.providers
      .filter((p) => p.wsUrl !== undefined)
      .sort((a, b) => Number(exclude.has(a.id)) - Number(exclude.has(b.id)) || a.priority - b.priority);
  }

  httpProviderIds(avoid?: string): string[] {
    return this.providers.filter((p) => p.httpUrl !== undefined && !this.down.has(p.id) && p.id !== avoid).map((p) => p.id);
  }

  callOn<S extends z.ZodType>(provider: string, method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    if (this.down.has(provider)) {
      return Promise.resolve({ ok: false, error: { code: 'unreachable', retryable: true, provider, message: 'down' } });
    }
    return this.chain.call(method, params, schema);
  }

  call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    return this.chain.call(method, params, schema);
  }
}
