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
    const draining = { ...base, drain: { startedAt: 99_000, windowMs: 5_000, connectionsAtStart: 1 } };
    expect(podState(draining, base.at + 1)).toBe('draining');
    expect(podState(draining, base.at + OPS_STALE_AFTER_MS + 1)).toBe('stale');
    expect(podState(base, base.at + OPS_STALE_AFTER_MS + 1)).toBe('stale');
  });
});
