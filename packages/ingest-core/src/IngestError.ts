/** Errors that cross the ingest-core boundary: every one says whether retrying can help. */
export type IngestError =
  | { code: 'fenced'; retryable: false; message: string }
  | { code: 'stopped'; retryable: false; message: string }
  | { code: 'redis_unavailable'; retryable: true; message: string }
  | { code: 'wrong_type'; retryable: false; message: string }
  | { code: 'upstream_unavailable'; retryable: true; message: string }
  | { code: 'upstream_garbage'; retryable: true; message: string };

export type IngestErrorCode = IngestError['code'];

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
