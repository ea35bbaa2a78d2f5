import { describe, expect, it } from 'vitest';
import { drainChartData, extendDrainTrace, scheduleLeft } from './DrainTrace.js';

const drain = { startedAt: 10_000, windowMs: 10_000, connectionsAtStart: 100, outcome: null };

describe('the drain schedule', () => {
  it('falls linearly from connectionsAtStart to 0 over the window and stays there', () => {
    expect(scheduleLeft(drain, 9_000)).toBe(100);
    expect(scheduleLeft(drain, 10_000)).toBe(100);
    expect(scheduleLeft(drain, 12_500)).toBe(75);
    expect(scheduleLeft(drain, 20_000)).toBe(0);
    expect(scheduleLeft(drain, 30_000)).toBe(0);
  });

  it('starts a new trace for a drain with another start', () => {
    const first = extendDrainTrace(undefined, drain, { at: 11_000, connections: 90 });
    const same = extendDrainTrace(first, drain, { at: 12_000, connections: 80 });
    expect(same.points).toHaveLength(2);
    const next = extendDrainTrace(same, { ...drain, startedAt: 50_000 }, { at: 51_000, connections: 5 });
    expect(next.points).toEqual([{ at: 51_000, connections: 5 }]);
  });

  it("takes how the drain ended from the relay's last snapshot", () => {
    const running = extendDrainTrace(undefined, drain, { at: 11_000, connections: 90 });
    expect(running.outcome).toBeNull();
    const ended = extendDrainTrace(running, { ...drain, outcome: 'drained' }, { at: 19_000, connections: 0 });
    expect(ended).toMatchObject({ outcome: 'drained', points: [{ connections: 90 }, { connections: 0 }] });
  });

  it('draws the schedule at every x and the measured count where there is one', () => {
    const trace = extendDrainTrace(extendDrainTrace(undefined, drain, { at: 12_000, connections: 85 }), drain, {
      at: 15_000,
      connections: 40,
    });
    expect(drainChartData(trace)).toEqual({ x: [0, 2, 5, 10], schedule: [100, 80, 50, 0], actual: [100, 85, 40, null] });
  });
});
