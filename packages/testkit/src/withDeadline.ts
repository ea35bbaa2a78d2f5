/** Raised when something a test waits for does not happen in time. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  constructor(
    message: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`${message} (deadline ${timeoutMs} ms)`, options);
  }
}

/**
 * Settles like `promise`, or rejects with a `DeadlineError` carrying `message` once `ms` have
 * passed. The timer is cleared either way so a finished test leaves no handle behind.
 */
export function withDeadline<T>(promise: PromiseLike<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(message, ms)), ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
