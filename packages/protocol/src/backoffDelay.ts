/**
 * The one retry delay used everywhere (client reconnects and token retries, relay reads, key
 * fetches and Redis reconnects, ingest workers and adapters): full-jitter exponential backoff,
 * uniform in [0, min(maxMs, baseMs·2^attempt)) whole milliseconds, `attempt` counted from 0.
 *
 * Full rather than equal jitter because what hurts is a herd (every pod reconnecting to a
 * restarted Redis, every browser to a restarted relay) retrying in step; spreading it matters more
 * than any single caller's latency. The exponent is capped so a long outage cannot overflow the
 * product to Infinity (2^64 already dwarfs any sensible maxMs).
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 64);
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** exponent));
}
