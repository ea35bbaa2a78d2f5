/** Why an upstream call failed; `garbage` means the provider answered something that is not JSON-RPC. */
export type RpcError =
  | { code: 'timeout'; retryable: true; provider: string; message: string }
  | { code: 'unreachable'; retryable: true; provider: string; message: string }
  | { code: 'garbage'; retryable: true; provider: string; message: string }
  | { code: 'rpc_error'; retryable: true; provider: string; message: string; rpcCode: number }
  | { code: 'closed'; retryable: true; provider: string; message: string }
  /** Every provider refuses the logs of these blocks even one block at a time (a size limit). */
  | { code: 'range_refused'; retryable: false; provider: string; message: string; fromBlock: number; toBlock: number };

export type RpcResult<T> = { ok: true; value: T } | { ok: false; error: RpcError };

export class RpcFailure extends Error {
  override readonly name = 'RpcFailure';
  constructor(readonly error: RpcError) {
    super(`${error.provider}: ${error.code}: ${error.message}`);
  }
}
