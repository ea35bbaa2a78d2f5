/** Errors that cross the ingest-core boundary: every one says whether retrying can help. */
export type IngestError =
  | { code: 'fenced'; retryable: false; message: string }
  | { code: 'stopped'; retryable: false; message: string }
  | { code: 'redis_unavailable'; retryable: true; message: string }
  | { code: 'wrong_type'; retryable: false; message: string }
  /** The stream's companion keys cannot share its Redis Cluster slot (see ingestKeys). */
  | { code: 'stream_untaggable'; retryable: false; stream: string; message: string }
  /** Not a stream name (docs/protocol.md §2): no subject of a JetStream target holds it. */
  | { code: 'stream_invalid'; retryable: false; stream: string; message: string }
  /**
   * NATS or the JetStream cluster did not answer, answered "not now" (an election, a replica
   * missing), or the connection dropped under a request: whether it was applied may be unknown,
   * and the writer reads its state again before the next write.
   */
  | { code: 'jetstream_unavailable'; retryable: true; message: string }
  /** JetStream refused for good (a stream's limit or configuration, an entry too large for it). */
  | { code: 'jetstream_rejected'; retryable: false; message: string }
  | { code: 'upstream_unavailable'; retryable: true; message: string }
  /** The upstream refused our credentials (a wrong or revoked key): only a corrected configuration helps. */
  | { code: 'upstream_refused'; retryable: false; message: string }
  | { code: 'upstream_garbage'; retryable: true; message: string };

export type IngestErrorCode = IngestError['code'];

/** An IngestError thrown where the interface has no error result (a lease call, a state read). */
export class IngestFailure extends Error {
  override readonly name = 'IngestFailure';
  constructor(readonly error: IngestError) {
    super(`${error.code}: ${error.message}`);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
