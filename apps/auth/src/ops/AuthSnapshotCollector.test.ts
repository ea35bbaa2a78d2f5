import { describe, expect, it } from 'vitest';
import { authSnapshotSchema } from '@streamgate/ops';
import { createAuthMetrics } from '../createAuthMetrics.js';
import { AuthSnapshotCollector } from './AuthSnapshotCollector.js';

describe('AuthSnapshotCollector', () => {
  it('reports tokens issued and refusals by tRPC code from the same increments as the metrics, and key ids only', async () => {
    const metrics = createAuthMetrics();
    let now = 3_000;
    const collector = new AuthSnapshotCollector(
      {
        pod: 'auth-0',
        startedAt: 1_000,
        ready: () => true,
        tokensIssuedTotal: () => metrics.counts.tokensIssued,
        refusals: () => metrics.counts.refusals,
        signingKeyIds: () => ['k-new', 'k-old'],
      },
      () => now,
    );
    for (let i = 0; i < 4; i++) metrics.observer.issued?.({ path: 'demo.token', stream: 'demo:a', subject: 'alice' });
    metrics.refused('UNAUTHORIZED');
    metrics.refused('FORBIDDEN');
    metrics.refused('UNAUTHORIZED');

    const first = collector.collect(0);
    expect(authSnapshotSchema.parse(first)).toEqual(first);
    expect(first).toEqual({
      kind: 'auth',
      v: 1,
      pod: 'auth-0',
      at: 3_000,
      startedAt: 1_000,
      seq: 0,
      truncated: false,
      ready: true,
      tokensIssuedTotal: 4,
      // 4 over the 2 s since the start.
      tokensPerSecond: 2,
      refusals: { UNAUTHORIZED: 2, FORBIDDEN: 1 },
      signingKeyIds: ['k-new', 'k-old'],
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain('streamgate_auth_refusals_total{code="UNAUTHORIZED"} 2');
    expect(text).toContain('streamgate_auth_tokens_issued_total{procedure="demo.token"} 4');

    now = 4_000;
    expect(collector.collect(1)).toMatchObject({ tokensIssuedTotal: 4, tokensPerSecond: 0 });
  });

  it('cuts the key list to its bound and flags it', () => {
    const snapshot = new AuthSnapshotCollector(
      {
        pod: 'auth-0',
        startedAt: 0,
        ready: () => false,
        tokensIssuedTotal: () => 0,
        refusals: () => new Map(),
        signingKeyIds: () => Array.from({ length: 20 }, (_, i) => `kid-${i}`),
      },
      () => 10,
    ).collect(0);
    expect(authSnapshotSchema.safeParse(snapshot).success).toBe(true);
    expect(snapshot).toMatchObject({ truncated: true, ready: false });
    expect(snapshot.signingKeyIds).toHaveLength(16);
  });
});
