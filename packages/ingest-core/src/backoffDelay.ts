/** Full-jitter exponential backoff: uniform in [0, min(maxMs, baseMs·2^attempt)). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.random() * ceiling;
}
