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
 */
export function ingestReadiness(targets: readonly string[], unready: readonly string[]): ReadinessAnswer {
  const down = new Set(unready);
  const ready = targets.some((target) => !down.has(target));
  const lines = targets.map((target) => `${target} ${down.has(target) ? 'not ready' : 'up'}`);
  return { status: ready ? 200 : 503, body: [ready ? 'ready' : 'no redis target ready', ...lines].join('\n') };
}
