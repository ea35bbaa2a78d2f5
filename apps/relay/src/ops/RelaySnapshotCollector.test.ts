import { describe, expect, it } from 'vitest';
import { OPS_SNAPSHOT_MAX_BYTES, relaySnapshotSchema } from '@streamgate/ops';
import { RelaySnapshotCollector } from './RelaySnapshotCollector.js';
import type { RelayOpsState, RelayReadModeState } from './RelaySnapshotCollector.js';

function state(overrides: Partial<RelayOpsState> = {}): RelayOpsState & { delivered: number } {
  const s: RelayOpsState & { delivered: number } = {
    delivered: 0,
    pod: 'relay-0',
    startedAt: 1_000,
    ready: () => true,
    connections: () => 3,
    subscriptions: () => 5,
    streamsWatched: () => 2,
    deliveriesTotal: (): number => s.delivered,
    refusals: () => [['token_expired', 2] as const, ['close:overloaded', 1] as const],
    readModes: () => [
      { target: 'redis://b.local:6379/0', mode: 'notify' as const },
      { target: 'redis://a.local:6380/2', mode: 'pending' as const },
    ],
    drain: () => null,
    drainOutcome: () => null,
    ...overrides,
  };
  return s;
}

describe('RelaySnapshotCollector', () => {
  it('builds a schema-valid snapshot from the live state, deliveries per second over the last interval', () => {
    let now = 2_000;
    const s = state();
    const collector = new RelaySnapshotCollector(s, () => now);
    s.delivered = 500;
    const first = collector.collect(0);
    expect(relaySnapshotSchema.parse(first)).toEqual(first);
    expect(first).toMatchObject({
      kind: 'relay',
      pod: 'relay-0',
      at: 2_000,
      startedAt: 1_000,
      seq: 0,
      ready: true,
      connections: 3,
      subscriptions: 5,
      streamsWatched: 2,
      deliveriesTotal: 500,
      // 500 since the start, 1 s ago.
      deliveriesPerSecond: 500,
      refusals: { token_expired: 2, 'close:overloaded': 1 },
      // Worst first; host:port/db only.
      readModes: [
        { target: 'a.local:6380/2', mode: 'pending' },
        { target: 'b.local:6379/0', mode: 'notify' },
      ],
      drain: null,
      truncated: false,
    });
    now = 4_000;
    s.delivered = 700;
    expect(collector.collect(1)).toMatchObject({ seq: 1, deliveriesTotal: 700, deliveriesPerSecond: 100 });
  });

  it('shows the drain schedule in force, a window of 0 as the shortest the schema allows', () => {
    const draining = state({ ready: () => false, drain: () => ({ startedAt: 5_000, windowMs: 0, connectionsAtStart: 40 }) });
    const snapshot = new RelaySnapshotCollector(draining, () => 6_000).collect(7);
    expect(relaySnapshotSchema.safeParse(snapshot).success).toBe(true);
    expect(snapshot).toMatchObject({ ready: false, drain: { startedAt: 5_000, windowMs: 1, connectionsAtStart: 40, outcome: null } });
  });

  it('says in the drain how it ended once it has, for the last snapshot the relay writes as it exits', () => {
    for (const outcome of ['drained', 'deadline'] as const) {
      const ended = state({
        ready: () => false,
        connections: () => 0,
        drain: () => ({ startedAt: 5_000, windowMs: 2_000, connectionsAtStart: 4 }),
        drainOutcome: () => outcome,
      });
      const snapshot = new RelaySnapshotCollector(ended, () => 7_500).collect(9);
      expect(relaySnapshotSchema.parse(snapshot)).toEqual(snapshot);
      expect(snapshot.drain).toEqual({ startedAt: 5_000, windowMs: 2_000, connectionsAtStart: 4, outcome });
    }
  });

  it('cuts lists to their bounds, flags it, and stays under the size bound', () => {
    const modes: RelayReadModeState[] = ['notify', 'batch', 'pending'];
    const many = state({
      pod: 'p'.repeat(300),
      readModes: () =>
        Array.from({ length: 100 }, (_, i) => ({ target: `redis://${'h'.repeat(100)}${i}.local:6379/0`, mode: modes[i % 3] ?? 'batch' })),
      refusals: () => Array.from({ length: 200 }, (_, i) => [`${'r'.repeat(70)}${i}`, i] as const),
    });
    const snapshot = new RelaySnapshotCollector(many, () => 2_000).collect(0);
    expect(relaySnapshotSchema.safeParse(snapshot).success).toBe(true);
    expect(snapshot.truncated).toBe(true);
    expect(snapshot.readModes).toHaveLength(32);
    expect(snapshot.readModes.slice(0, 3).map((m) => m.mode)).toEqual(['pending', 'pending', 'pending']);
    expect(new TextEncoder().encode(JSON.stringify(snapshot)).length).toBeLessThan(OPS_SNAPSHOT_MAX_BYTES);
  });
});
