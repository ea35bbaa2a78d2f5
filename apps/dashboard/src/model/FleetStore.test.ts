import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IngestSnapshot, RelaySnapshot } from '@streamgate/ops';
import { FleetStore } from './FleetStore.js';

function relay(pod: string, at: number, fields: Partial<RelaySnapshot> = {}): RelaySnapshot {
  return {
    kind: 'relay',
    v: 1,
    pod,
    at,
    startedAt: 1_000,
    seq: 0,
    truncated: false,
    ready: true,
    connections: 10,
    subscriptions: 12,
    streamsWatched: 3,
    deliveriesTotal: 100,
    deliveriesPerSecond: 5,
    refusals: {},
    readModes: [],
    drain: null,
    ...fields,
  };
}

function ingest(pod: string, at: number): IngestSnapshot {
  return { kind: 'ingest', v: 1, pod, at, startedAt: 1_000, seq: 0, truncated: false, leasesHeld: 1, chains: [], venues: [] };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('FleetStore', () => {
  it('keeps the newest snapshot per pod, relays first, and a history of each relay', () => {
    const store = new FleetStore({ now: () => 10_000 });
    store.ingest(ingest('ingest-0', 9_000), '1-0');
    store.ingest(relay('relay-1', 9_000, { connections: 4 }), '2-0');
    store.ingest(relay('relay-0', 9_000), '3-0');
    store.ingest(relay('relay-1', 10_000, { connections: 6 }), '4-0');
    const view = store.view();
    expect(view.pods.map((p) => `${p.snapshot.kind}:${p.snapshot.pod}`)).toEqual(['relay:relay-0', 'relay:relay-1', 'ingest:ingest-0']);
    expect(view.pods[1]?.snapshot).toMatchObject({ connections: 6 });
    expect(view.relayHistory.get('relay-1')?.map((p) => p.connections)).toEqual([4, 6]);
    expect(view.snapshots).toBe(4);
    expect(view.badEntries.count).toBe(0);
  });

  it('counts an entry that is no snapshot, keeps why, and goes on', () => {
    const store = new FleetStore();
    store.ingest({ kind: 'relay', pod: 'x' }, '5-0');
    store.ingest('not even an object', '6-0');
    store.reject('7-0', 'entry has no "data" field');
    store.ingest(relay('relay-0', 1_000), '8-0');
    const view = store.view();
    expect(view.badEntries.count).toBe(3);
    expect(view.badEntries.last).toBe('7-0: entry has no "data" field');
    expect(view.pods).toHaveLength(1);
  });

  it('keeps an older picture from replacing a newer one of the same pod', () => {
    const store = new FleetStore();
    store.ingest(relay('relay-0', 2_000, { connections: 2 }), '1-0');
    store.ingest(relay('relay-0', 1_000, { connections: 1 }), '2-0');
    expect(store.view().pods[0]?.snapshot).toMatchObject({ connections: 2 });
    expect(store.view().relayHistory.get('relay-0')).toHaveLength(1);
  });

  it('traces a drain across snapshots and keeps it once the drain is over', () => {
    const store = new FleetStore();
    const drain = { startedAt: 10_000, windowMs: 4_000, connectionsAtStart: 8, outcome: null };
    store.ingest(relay('relay-0', 11_000, { connections: 6, drain }), '1-0');
    store.ingest(relay('relay-0', 12_000, { connections: 4, drain }), '2-0');
    store.ingest(relay('relay-0', 13_000, { connections: 0, drain: null }), '3-0');
    const trace = store.view().pods[0]?.drain;
    expect(trace).toMatchObject({ startedAt: 10_000, windowMs: 4_000, connectionsAtStart: 8 });
    expect(trace?.points.map((p) => p.connections)).toEqual([6, 4]);
  });

  it("keeps a drained relay's last snapshot, the one that says how its drain ended", () => {
    const store = new FleetStore();
    const drain = { startedAt: 10_000, windowMs: 4_000, connectionsAtStart: 8, outcome: null };
    store.ingest(relay('relay-0', 11_000, { connections: 6, drain }), '1-0');
    store.ingest(relay('relay-0', 14_000, { connections: 0, ready: false, drain: { ...drain, outcome: 'drained' } }), '2-0');
    const pod = store.view().pods[0];
    expect(pod?.snapshot).toMatchObject({ connections: 0, drain: { outcome: 'drained' } });
    expect(pod?.drain).toMatchObject({ outcome: 'drained', points: [{ connections: 6 }, { connections: 0 }] });
  });

  it('counts the snapshots of one process it never got, and starts again for a restarted one', () => {
    const store = new FleetStore();
    store.ingest(relay('relay-0', 1_000, { seq: 0 }), '1-0');
    store.ingest(relay('relay-0', 2_000, { seq: 1 }), '2-0');
    store.ingest(relay('relay-0', 5_000, { seq: 4 }), '3-0');
    expect(store.view().pods[0]?.missed).toBe(2);
    store.ingest(relay('relay-0', 6_000, { seq: 0, startedAt: 5_500 }), '4-0');
    expect(store.view().pods[0]?.missed).toBe(0);
  });

  it('forgets pods and history older than the history window, on the pods clock', () => {
    const store = new FleetStore({ historyMs: 60_000 });
    store.ingest(relay('gone', 1_000), '1-0');
    store.ingest(relay('here', 30_000), '2-0');
    store.ingest(relay('here', 70_000), '3-0');
    const view = store.view();
    expect(view.pods.map((p) => p.snapshot.pod)).toEqual(['here']);
    expect([...view.relayHistory.keys()]).toEqual(['here']);
    expect(view.relayHistory.get('here')?.map((p) => p.at)).toEqual([30_000, 70_000]);
  });

  it('tells listeners once per burst, not once per entry', () => {
    vi.useFakeTimers();
    const store = new FleetStore({ notifyEveryMs: 100 });
    const listener = vi.fn();
    store.subscribe(listener);
    for (let i = 0; i < 500; i++) store.ingest(relay('relay-0', 1_000 + i), `${i + 1}-0`);
    expect(listener).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(listener).toHaveBeenCalledTimes(1);
    const first = store.view();
    expect(store.view()).toBe(first);
    store.ingest(relay('relay-0', 5_000), '600-0');
    expect(store.view()).not.toBe(first);
    store.close();
  });

  it('estimates how far the browser clock is ahead from the freshest snapshots', () => {
    let now = 100_000;
    const store = new FleetStore({ now: () => now });
    store.ingest(relay('old', 10_000), '1-0'); // replayed backlog: no sample
    expect(store.view().skewMs).toBe(0);
    now = 102_500;
    store.ingest(relay('relay-0', 100_000), '2-0');
    now = 103_600;
    store.ingest(relay('relay-0', 101_000), '3-0');
    expect(store.view().skewMs).toBe(2_500);
  });
});
