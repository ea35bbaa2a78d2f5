import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RelayMetrics } from './RelayMetrics.js';

describe('RelayMetrics catalogue', () => {
  it('lists every metric of the relay in apps/relay/README.md, and no other', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `(streamgate_relay_[a-z_]+)` \|/gm)].map((m) => m[1]);
    const registered = (await new RelayMetrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith('streamgate_'));
    expect([...documented].sort()).toEqual([...registered].sort());
  });
});

describe('RelayMetrics refusal counts', () => {
  it('counts each refusal in the metrics and in the snapshot tally from the same call', async () => {
    const metrics = new RelayMetrics();
    metrics.frameError('token_expired');
    metrics.frameError('token_expired');
    metrics.frameError('frame_too_large');
    metrics.limitBreach('frame_size');
    metrics.limitBreach('connections');
    metrics.limitBreach('protocol_violation');
    metrics.limitBreach('pending_catchup');
    metrics.slowConsumerCut();
    metrics.hub.slowConsumerCut();
    metrics.drainRefusal();
    metrics.hub.delivered(7, 'live');
    metrics.hub.delivered(3, 'catch-up');

    expect(Object.fromEntries(metrics.refusals.entries())).toEqual({
      token_expired: 2,
      frame_too_large: 1,
      'close:overloaded': 1,
      'close:protocolViolation': 1,
      'close:slowConsumer': 2,
      'close:tryAnotherPod': 1,
    });
    expect(metrics.refusals.entries()[0]).toEqual(['token_expired', 2]);
    expect(metrics.deliveriesTotal).toBe(10);
    const text = await metrics.registry.metrics();
    expect(text).toContain('streamgate_relay_frame_errors_total{code="token_expired"} 2');
    expect(text).toContain('streamgate_relay_limit_breaches_total{limit="connections"} 1');
    expect(text).toContain('streamgate_relay_limit_breaches_total{limit="pending_catchup"} 1');
    expect(text).toContain('streamgate_relay_slow_consumer_cuts_total 2');
    expect(text).toContain('streamgate_relay_drain_refused_total 1');
    expect(text).toContain('streamgate_relay_deliveries_total{path="live"} 7');
    expect(text).toContain('streamgate_relay_deliveries_total{path="catch-up"} 3');
    metrics.hub.delivered(5, 'live');
    expect(await metrics.registry.metrics()).toContain('streamgate_relay_deliveries_total{path="live"} 12');
  });
});
