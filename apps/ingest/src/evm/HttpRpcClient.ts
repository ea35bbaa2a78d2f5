import type { z } from 'zod';
import { errorMessage } from '@streamgate/ingest-core';
import { rpcResponseSchema } from './rpcSchemas.js';
import type { RpcResult } from './RpcError.js';

/** JSON-RPC over HTTP POST, every answer parsed before use, with a deadline per call. */
export class HttpRpcClient {
  private nextId = 1;

  constructor(
    readonly provider: string,
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    const provider = this.provider;
    let text: string;
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      return {
        ok: false,
        error: timedOut
          ? { code: 'timeout', retryable: true, provider, message: `${method} took over ${this.timeoutMs} ms` }
          : { code: 'unreachable', retryable: true, provider, message: errorMessage(error) },
      };
    }
    return parseRpcReply(provider, method, text, schema);
  }
}

export function parseRpcReply<S extends z.ZodType>(provider: string, method: string, text: string, schema: S): RpcResult<z.output<S>> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      ok: false,
      error: { code: 'garbage', retryable: true, provider, message: `${method}: answer is not JSON: ${text.slice(0, 80)}` },
    };
  }
  const envelope = rpcResponseSchema.safeParse(json);
  if (!envelope.success) {
    return { ok: false, error: { code: 'garbage', retryable: true, provider, message: `${method}: answer is not JSON-RPC` } };
  }
  if ('error' in envelope.data) {
    const { code, message } = envelope.data.error;
    return { ok: false, error: { code: 'rpc_error', retryable: true, provider, message: `${method}: ${message}`, rpcCode: code } };
  }
  const result = schema.safeParse(envelope.data.result);
  if (!result.success) {
    return { ok: false, error: { code: 'garbage', retryable: true, provider, message: `${method}: unexpected result shape` } };
  }
  return { ok: true, value: result.data };
}
