import { WebSocket } from 'ws';
import type { z } from 'zod';
import { errorMessage } from '@streamgate/ingest-core';
import { parseRpcReply } from './HttpRpcClient.js';
import { subscriptionNotificationSchema } from './rpcSchemas.js';
import type { RpcError, RpcResult } from './RpcError.js';

interface Pending {
  resolve: (text: string) => void;
  timer: NodeJS.Timeout;
}

export interface WsRpcHandlers {
  notification(subscription: string, result: unknown): void;
  /** The socket is gone or spoke garbage; called once. */
  failed(error: RpcError): void;
}

/** One JSON-RPC WebSocket session: requests with deadlines, subscription pushes, one failure signal. */
export class WsRpcClient {
  private socket: WebSocket | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private done = false;

  constructor(
    readonly provider: string,
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly handlers: WsRpcHandlers,
  ) {}

  get isOpen(): boolean {
    return !this.done && this.socket?.readyState === WebSocket.OPEN;
  }

  connect(): Promise<RpcResult<void>> {
    const provider = this.provider;
    return new Promise((resolve) => {
      const socket = new WebSocket(this.url, { handshakeTimeout: this.timeoutMs });
      this.socket = socket;
      let opened = false;
      socket.once('open', () => {
        opened = true;
        resolve({ ok: true, value: undefined });
      });
      socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) =>
        this.onMessage(
          Buffer.isBuffer(data)
            ? data.toString('utf8')
            : Array.isArray(data)
              ? Buffer.concat(data).toString('utf8')
              : Buffer.from(data).toString('utf8'),
        ),
      );
      socket.on('error', (error) => {
        if (!opened) resolve({ ok: false, error: { code: 'unreachable', retryable: true, provider, message: errorMessage(error) } });
      });
      socket.on('close', () => {
        if (!opened) resolve({ ok: false, error: { code: 'unreachable', retryable: true, provider, message: 'closed before open' } });
        this.fail({ code: 'closed', retryable: true, provider, message: 'socket closed' });
      });
    });
  }

  async call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    const socket = this.socket;
    const provider = this.provider;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
      return { ok: false, error: { code: 'closed', retryable: true, provider, message: 'socket not open' } };
    }
    const id = this.nextId++;
    const text = await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, this.timeoutMs);
      this.pending.set(id, { resolve, timer });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    if (text === null)
      return { ok: false, error: { code: 'timeout', retryable: true, provider, message: `${method} took over ${this.timeoutMs} ms` } };
    return parseRpcReply(provider, method, text, schema);
  }

  private onMessage(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.fail({ code: 'garbage', retryable: true, provider: this.provider, message: `push is not JSON: ${text.slice(0, 80)}` });
      return;
    }
    const note = subscriptionNotificationSchema.safeParse(json);
    if (note.success) {
      this.handlers.notification(note.data.params.subscription, note.data.params.result);
      return;
    }
    const id = typeof json === 'object' && json !== null ? (json as { id?: unknown }).id : undefined;
    const pending = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (pending === undefined || typeof id !== 'number') {
      this.fail({ code: 'garbage', retryable: true, provider: this.provider, message: 'unexpected frame' });
      return;
    }
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.resolve(text);
  }

  private fail(error: RpcError): void {
    if (this.done) return;
    this.done = true;
    this.close();
    this.handlers.failed(error);
  }

  close(): void {
    this.done = true;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve('{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"socket closed"}}');
    }
    this.pending.clear();
    this.socket?.terminate();
  }
}
