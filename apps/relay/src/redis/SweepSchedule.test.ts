import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { SWEEP_LOOK_MS, SweepSchedule, UNNOTIFIED_SWEEP_MS } from './SweepSchedule.js';

describe('SweepSchedule', () => {
  it('sweeps every interval, and never looks in between when not on a cluster', async () => {
    const clock = new ManualClock();
    const due: number[] = [];
    const schedule = new SweepSchedule({ clock, intervalMs: 60_000, onDue: () => due.push(clock.now()) });
    await clock.advance(59_999);
    expect(due).toEqual([]);
    expect(clock.pending).toBe(1);
    await clock.advance(120_001);
    expect(due).toEqual([60_000, 120_000, 180_000]);
    schedule.close();
  });

  it('while a primary does not notify: sweeps within a look of being told, then every UNNOTIFIED_SWEEP_MS; slow again after', async () => {
    const clock = new ManualClock();
    const due: number[] = [];
    let unnotified = false;
    const schedule = new SweepSchedule({ clock, intervalMs: 60_000, unnotified: () => unnotified, onDue: () => due.push(clock.now()) });
    await clock.advance(10_500);
    expect(due).toEqual([]);
    unnotified = true;
    await clock.advance(SWEEP_LOOK_MS);
    expect(due).toEqual([11_000]);
    await clock.advance(2 * UNNOTIFIED_SWEEP_MS);
    expect(due).toEqual([11_000, 16_000, 21_000]);
    unnotified = false;
    await clock.advance(59_000);
    expect(due).toEqual([11_000, 16_000, 21_000]);
    await clock.advance(2_000);
    expect(due).toEqual([11_000, 16_000, 21_000, 81_000]);
    schedule.close();
  });
});
