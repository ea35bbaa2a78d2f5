import type { z } from 'zod';
import type { RpcResult } from './RpcError.js';
import { WsRpcClient } from './WsRpcClient.js';
import type { WsRpcHandlers } from './WsRpcClient.js';

/** What a stream run needs of a JSON-RPC socket: the seam its unit tests replace with a fake. */
export interface RpcSocket {
  readonly isOpen: boolean;
  connect(): Promise<RpcResult<void>>;
  call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>>;
  close(): void;
}

export type OpenRpcSocket = (provider: string, url: string, timeoutMs: number, handlers: WsRpcHandlers) => RpcSocket;

export const openWsRpcSocket: OpenRpcSocket = (provider, url, timeoutMs, handlers) => new WsRpcClient(provider, url, timeoutMs, handlers);
