/** What `/readyz` answers. */
export interface ReadinessAnswer {
  readonly status: 200 | 503;
  readonly body: string;
}

/**
 * The relay's rule (docs/protocol.md §8, "One Redis target down"): ready while at least one
 * target's connection is ready. One target down must not make a worker unready: every worker
 * would fail alike and the load balancer would drop them all, stopping the streams of the healthy
 * targets too. A worker that reaches none has a fault of its own, and is unready. The body is
 * `ready` (or `no redis target ready`), then one line per target: `<target> up` or `<target> not ready`.
 *
 * With `jetStream` (the streams live there; Redis holds leases and demand) the worker is also
 * unready while that one connection is down, `jetstream target not connected`: it is the only log
 * the worker writes, so nothing it owns can move on. Its line follows the Redis ones.
 */
export function ingestReadiness(
  targets: readonly string[],
  unready: readonly string[],
  jetStream?: { readonly target: string; readonly connected: boolean },
): ReadinessAnswer {
  const down = new Set(unready);
  const redisReady = targets.some((target) => !down.has(target));
  const lines = targets.map((target) => `${target} ${down.has(target) ? 'not ready' : 'up'}`);
  if (jetStream !== undefined) lines.push(`${jetStream.target} ${jetStream.connected ? 'up' : 'not ready'}`);
  const verdict = !redisReady ? 'no redis target ready' : jetStream?.connected === false ? 'jetstream target not connected' : 'ready';
  return { status: verdict === 'ready' ? 200 : 503, body: [verdict, ...lines].join('\n') };
}
