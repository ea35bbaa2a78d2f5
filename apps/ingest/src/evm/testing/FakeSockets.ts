import type { z } from 'zod';
import type { RpcError, RpcResult } from '../RpcError.js';
import type { OpenRpcSocket, RpcSocket } from '../RpcSocket.js';
import type { WsRpcHandlers } from '../WsRpcClient.js';

/** In-memory newHeads sockets, one provider id each: a test refuses, kills and pushes on them. */
export class FakeSockets {
  /** eth_subscribe calls per provider, as the fault proxies count them in the e2e tests. */
  readonly subscribes = new Map<string, number>();
  private readonly refusing = new Set<string>();
  private readonly subscribed = new Set<FakeSocket>();

  readonly open: OpenRpcSocket = (provider, _url, _timeoutMs, handlers) => new FakeSocket(this, provider, handlers);

  /** While refused, a provider's sockets do not open (as a provider whose WebSocket is down). */
  refuse(provider: string, refused = true): void {
    if (refused) this.refusing.add(provider);
    else this.refusing.delete(provider);
  }

  isRefused(provider: string): boolean {
    return this.refusing.has(provider);
  }

  /** Providers with a live subscription, in the order they subscribed. */
  live(): string[] {
    return [...this.subscribed].map((s) => s.provider);
  }

  /** A newHeads push on every live subscription of `provider` (all providers when omitted). */
  push(result: unknown, provider?: string): void {
    for (const socket of [...this.subscribed]) if (provider === undefined || socket.provider === provider) socket.deliver(result);
  }

  /** The provider's live sockets fail, as a dropped connection does. */
  kill(provider: string): void {
    for (const socket of [...this.subscribed]) {
      if (socket.provider === provider) socket.fail({ code: 'closed', retryable: true, provider, message: 'socket closed' });
    }
  }

  /** @internal */
  track(socket: FakeSocket, live: boolean): void {
    if (live) {
      this.subscribed.add(socket);
      this.subscribes.set(socket.provider, (this.subscribes.get(socket.provider) ?? 0) + 1);
    } else this.subscribed.delete(socket);
  }
}

class FakeSocket implements RpcSocket {
  private state: 'new' | 'open' | 'closed' = 'new';
  private subscription: string | null = null;
  private static ids = 0;

  constructor(
    private readonly hub: FakeSockets,
    readonly provider: string,
    private readonly handlers: WsRpcHandlers,
  ) {}

  get isOpen(): boolean {
    return this.state === 'open';
  }

  connect(): Promise<RpcResult<void>> {
    if (this.hub.isRefused(this.provider) || this.state === 'closed') {
      this.state = 'closed';
      return Promise.resolve({ ok: false, error: { code: 'unreachable', retryable: true, provider: this.provider, message: 'refused' } });
    }
    this.state = 'open';
    return Promise.resolve({ ok: true, value: undefined });
  }

  call<S extends z.ZodType>(method: string, _params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    if (this.state !== 'open') {
      return Promise.resolve({
        ok: false,
        error: { code: 'closed', retryable: true, provider: this.provider, message: 'socket not open' },
      });
    }
    let raw: unknown = true;
    if (method === 'eth_subscribe') {
      this.subscription = `sub-${++FakeSocket.ids}`;
      this.hub.track(this, true);
      raw = this.subscription;
    }
    const parsed = schema.safeParse(raw);
    return Promise.resolve(
      parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, error: { code: 'garbage', retryable: true, provider: this.provider, message: method } },
    );
  }

  deliver(result: unknown): void {
    if (this.state === 'open' && this.subscription !== null) this.handlers.notification(this.subscription, result);
  }

  fail(error: RpcError): void {
    if (this.state !== 'open') return;
    this.close();
    this.handlers.failed(error);
  }

  close(): void {
    this.state = 'closed';
    this.hub.track(this, false);
  }
}
