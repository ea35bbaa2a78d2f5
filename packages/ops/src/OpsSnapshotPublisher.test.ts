import { describe, expect, it } from 'vitest';
import { OpsSnapshotPublisher } from './OpsSnapshotPublisher.js';
import type { OpsPublishFailure } from './OpsSnapshotPublisher.js';
import type { AuthSnapshot } from './opsSnapshot.js';

const auth = (seq: number): AuthSnapshot => ({
  kind: 'auth',
  v: 1,
  pod: 'auth-0',
  at: 1_000 + seq,
  startedAt: 1_000,
  seq,
  truncated: false,
  ready: true,
  tokensIssuedTotal: 3,
  tokensPerSecond: 1,
  refusals: {},
  signingKeyIds: ['k1'],
});

function harness(collect: (seq: number) => AuthSnapshot, sink: (json: string) => Promise<void> = () => Promise.resolve()) {
  const sent: string[] = [];
  const failures: OpsPublishFailure[] = [];
  const publisher = new OpsSnapshotPublisher({
    collect,
    sink: async (json) => {
      await sink(json);
      sent.push(json);
    },
    onFailure: (f) => failures.push(f),
    maxBytes: 400,
  });
  return { publisher, sent, failures };
}

describe('OpsSnapshotPublisher', () => {
  it('numbers snapshots and sends them as JSON', async () => {
    const { publisher, sent } = harness(auth);
    await publisher.publishOnce();
    await publisher.publishOnce();
    expect(sent.map((j) => (JSON.parse(j) as AuthSnapshot).seq)).toEqual([0, 1]);
  });

  it('reports a collector that throws, an invalid or oversized snapshot and a failed sink, and goes on', async () => {
    let mode = 'throw';
    const { publisher, sent, failures } = harness(
      (seq) => {
        if (mode === 'throw') throw new Error('state gone');
        if (mode === 'invalid') return { ...auth(seq), pod: '' };
        if (mode === 'large') return { ...auth(seq), signingKeyIds: Array.from({ length: 16 }, (_, i) => `key-${i}-${'x'.repeat(20)}`) };
        return auth(seq);
      },
      (json) => (json.includes('"seq":3') ? Promise.reject(new Error('redis down')) : Promise.resolve()),
    );
    for (const next of ['invalid', 'large', 'ok', 'ok', 'done']) {
      await publisher.publishOnce();
      mode = next;
    }
    expect(failures.map((f) => f.code)).toEqual(['collect_failed', 'invalid_snapshot', 'too_large', 'sink_failed']);
    expect(sent).toHaveLength(1);
  });

  it('never overlaps a publish still in flight', async () => {
    let release: () => void = () => undefined;
    const { publisher, sent } = harness(auth, () => new Promise<void>((resolve) => (release = resolve)));
    const first = publisher.publishOnce();
    const second = publisher.publishOnce();
    expect(second).toBe(first);
    release();
    await first;
    expect(sent).toHaveLength(1);
    await publisher.stop();
  });
});
