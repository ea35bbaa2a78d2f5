import { describe, expect, it } from 'vitest';
import { OPS_STALE_AFTER_MS } from '@streamgate/ops';
import type { RelaySnapshot } from '@streamgate/ops';
import { podState } from './podState.js';

const base: RelaySnapshot = {
  kind: 'relay',
  v: 1,
  pod: 'relay-0',
  at: 100_000,
  startedAt: 0,
  seq: 1,
  truncated: false,
  ready: true,
  connections: 1,
  subscriptions: 1,
  streamsWatched: 1,
  deliveriesTotal: 0,
  deliveriesPerSecond: 0,
  refusals: {},
  readModes: [],
  drain: null,
};

describe('podState', () => {
  it('is live, draining, or stale once no snapshot came for OPS_STALE_AFTER_MS, draining or not', () => {
    expect(podState(base, base.at + OPS_STALE_AFTER_MS)).toBe('live');
    const draining = { ...base, drain: { startedAt: 99_000, windowMs: 5_000, connectionsAtStart: 1, outcome: null } };
    expect(podState(draining, base.at + 1)).toBe('draining');
    expect(podState(draining, base.at + OPS_STALE_AFTER_MS + 1)).toBe('stale');
    expect(podState(base, base.at + OPS_STALE_AFTER_MS + 1)).toBe('stale');
  });

  it('is drained, however long ago, once the last snapshot says the drain ended; a pod silent mid-drain is stale', () => {
    const drain = { startedAt: 90_000, windowMs: 5_000, connectionsAtStart: 4 };
    for (const outcome of ['drained', 'deadline'] as const) {
      const last = { ...base, ready: false, connections: 0, drain: { ...drain, outcome } };
      expect(podState(last, base.at + 1)).toBe('drained');
      expect(podState(last, base.at + 4 * 60_000)).toBe('drained');
    }
    expect(podState({ ...base, drain: { ...drain, outcome: null } }, base.at + OPS_STALE_AFTER_MS + 1)).toBe('stale');
  });
});
