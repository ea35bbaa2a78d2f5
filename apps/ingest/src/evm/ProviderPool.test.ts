import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '@streamgate/protocol/testing';
import { providerSchema } from '../config.js';
import { ProviderPool } from './ProviderPool.js';
import type { HttpCaller } from './ProviderPool.js';
import type { RpcError, RpcResult } from './RpcError.js';

type Answer = { latencyMs: number; result: RpcResult<unknown> };

/** HTTP providers in memory: each answers what the test scripts, taking the fake time it says. */
class FakeHttp {
  readonly calls: string[] = [];
  private readonly answers = new Map<string, Answer>();

  constructor(private readonly clock: ManualClock) {}

  answer(provider: string, latencyMs: number, result: RpcResult<unknown> = { ok: true, value: '0x10' }): void {
    this.answers.set(provider, { latencyMs, result });
  }

  open = (provider: string): HttpCaller => ({
    provider,
    call: async <S extends z.ZodType>(_method: string, _params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> => {
      this.calls.push(provider);
      const answer = this.answers.get(provider) ?? { latencyMs: 1, result: { ok: true, value: '0x10' } };
      await this.clock.advance(answer.latencyMs);
      if (!answer.result.ok) return answer.result;
      const parsed = schema.safeParse(answer.result.value);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, error: { code: 'garbage', retryable: true, provider, message: 'shape' } };
    },
  });
}

const unreachable = (provider: string): RpcResult<unknown> => ({
  ok: false,
  error: { code: 'unreachable', retryable: true, provider, message: 'down' },
});

function setup(cooldownMs = 5_000) {
  const clock = new ManualClock(1_000_000);
  const http = new FakeHttp(clock);
  const errors: RpcError[] = [];
  const providers = [
    providerSchema.parse({ id: 'a', wsUrl: 'ws://a', httpUrl: 'http://a', priority: 2 }),
    providerSchema.parse({ id: 'b', httpUrl: 'http://b', priority: 0 }),
    providerSchema.parse({ id: 'c', wsUrl: 'ws://c', httpUrl: 'http://c', priority: 1 }),
    providerSchema.parse({ id: 'd', wsUrl: 'ws://d', priority: 0 }),
  ];
  const pool = new ProviderPool(providers, 1_000, cooldownMs, (e) => errors.push(e), clock, http.open);
  const call = () => pool.call('eth_blockNumber', [], z.string());
  return { clock, http, pool, errors, call };
}

describe('ProviderPool', () => {
  it('orders WebSocket candidates by priority, the excluded last, and leaves HTTP-only providers out', () => {
    const { pool } = setup();
    expect(pool.wsCandidates(new Set()).map((p) => p.id)).toEqual(['d', 'c', 'a']);
    expect(pool.wsCandidates(new Set(['d'])).map((p) => p.id)).toEqual(['c', 'a', 'd']);
  });

  it('sends HTTP calls to the fastest provider by its weighted latency, learning it from each call', async () => {
    const { http, pool, call } = setup();
    http.answer('a', 50);
    http.answer('b', 10);
    http.answer('c', 30);
    // Unmeasured providers are tried first, so each gets a first sample.
    for (let i = 0; i < 3; i++) await call();
    expect(new Set(http.calls)).toEqual(new Set(['a', 'b', 'c']));
    expect(pool.httpProviderIds()).toEqual(['b', 'c', 'a']);
    http.calls.length = 0;
    await call();
    expect(http.calls).toEqual(['b']);
    // b slows down: one slow answer moves its average by a fifth (10 → 28), still ahead of c...
    http.answer('b', 100);
    await call();
    expect(pool.httpProviderIds()).toEqual(['b', 'c', 'a']);
    // ...a second (28 → 42.4) puts it behind c (30), not yet behind a (50).
    await call();
    expect(pool.httpProviderIds()).toEqual(['c', 'b', 'a']);
  });

  it('puts a failing provider last for the cooldown and moves the call on to the next one', async () => {
    const { clock, http, pool, errors, call } = setup(5_000);
    http.answer('a', 30);
    http.answer('b', 10);
    http.answer('c', 20);
    for (let i = 0; i < 3; i++) await call();
    http.answer('b', 10, unreachable('b'));
    http.calls.length = 0;
    const result = await call();
    expect(result).toEqual({ ok: true, value: '0x10' });
    expect(http.calls).toEqual(['b', 'c']);
    expect(errors.map((e) => `${e.provider}:${e.code}`)).toEqual(['b:unreachable']);
    expect(pool.httpProviderIds()).toEqual(['c', 'a', 'b']);
    http.answer('b', 10);
    await clock.advance(5_000);
    expect(pool.httpProviderIds()).toEqual(['b', 'c', 'a']);
  });

  it("a node's own JSON-RPC error is reported but does not mark the endpoint unhealthy", async () => {
    const { http, pool, errors, call } = setup();
    http.answer('a', 30);
    http.answer('b', 10);
    http.answer('c', 20);
    for (let i = 0; i < 3; i++) await call();
    http.answer('b', 10, {
      ok: false,
      error: { code: 'rpc_error', retryable: true, provider: 'b', message: 'unknown block', rpcCode: -32000 },
    });
    await call();
    expect(errors.map((e) => e.code)).toEqual(['rpc_error']);
    expect(pool.httpProviderIds()[0]).toBe('b');
  });

  it('avoids the named provider (the failing socket’s) unless nothing else answers, and says so when none does', async () => {
    const { http, pool, call } = setup();
    http.answer('a', 30);
    http.answer('b', 10);
    http.answer('c', 20);
    for (let i = 0; i < 3; i++) await call();
    expect(pool.httpProviderIds('b')).toEqual(['c', 'a', 'b']);
    for (const p of ['a', 'b', 'c']) http.answer(p, 5, unreachable(p));
    const result = await pool.call('eth_blockNumber', [], z.string(), 'b');
    expect(result.ok).toBe(false);
    expect(await pool.callOn('nope', 'eth_blockNumber', [], z.string())).toMatchObject({ ok: false, error: { code: 'unreachable' } });
  });
});
