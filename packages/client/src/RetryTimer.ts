/**
 * One pending retry at a time, each waiting the backoff delay for its attempt number. The count
 * starts over only on `resetAttempts` (a success), not on `cancel`: a retry cancelled by a
 * disconnect and scheduled again keeps backing off.
 */
export class RetryTimer {
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  get pending(): boolean {
    return this.#timer !== undefined;
  }

  /** Calls `retry` after the delay `delayFor` gives for this attempt, replacing a pending retry. */
  schedule(delayFor: (attempt: number) => number, retry: () => void): void {
    this.cancel();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      retry();
    }, delayFor(this.#attempt++));
  }

  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  resetAttempts(): void {
    this.#attempt = 0;
  }
}
