import { describe, expect, it } from 'vitest';
import { TargetHealthWatch } from './TargetHealthWatch.js';

function watchFixture(downAfterMs: number, starvedGapMs?: number, unansweredForMs?: () => number) {
  let now = 0;
  let healthy = true;
  const events: string[] = [];
  const watch = new TargetHealthWatch({
    healthy: () => healthy,
    ...(unansweredForMs === undefined ? {} : { unansweredForMs }),
    downAfterMs,
    now: () => now,
    onDown: (ms) => events.push(`down after ${ms}`),
    onUp: (ms) => events.push(`up after ${ms}`),
    ...(starvedGapMs === undefined ? {} : { starvedGapMs }),
  });
  return {
    watch,
    events,
    at: (ms: number, isHealthy: boolean) => {
      now = ms;
      healthy = isHealthy;
      return watch.check();
    },
  };
}

describe('TargetHealthWatch', () => {
  it('holds a target unhealthy until the bound, then down once, then up when it answers', () => {
    const { at, events } = watchFixture(3_000);
    expect(at(0, true)).toBe('up');
    expect(at(1_000, false)).toBe('unhealthy');
    expect(at(3_999, false)).toBe('unhealthy');
    expect(events).toEqual([]);
    expect(at(4_000, false)).toBe('down');
    expect(at(9_000, false)).toBe('down');
    expect(events).toEqual(['down after 3000']);
    expect(at(10_000, true)).toBe('up');
    expect(events).toEqual(['down after 3000', 'up after 6000']);
  });

  it('never calls a blip shorter than the bound down, and measures each outage from its own start', () => {
    const { at, events } = watchFixture(3_000);
    at(0, false);
    at(2_500, false);
    at(2_600, true);
    // A second outage starts its own clock: the first one's 2.5 s do not count.
    at(3_000, false);
    expect(at(5_900, false)).toBe('unhealthy');
    expect(events).toEqual([]);
    expect(at(6_000, false)).toBe('down');
  });

  it('counts the bound from when the target stopped answering, not from when that showed', () => {
    // A frozen Redis shows only once its PING is 2 s overdue: it was already silent that long.
    let silentFor = 0;
    const { at, events } = watchFixture(3_000, undefined, () => silentFor);
    at(0, true);
    silentFor = 2_000;
    expect(at(2_000, false)).toBe('unhealthy');
    silentFor = 2_999;
    expect(at(2_999, false)).toBe('unhealthy');
    expect(at(3_000, false)).toBe('down');
    expect(events).toEqual(['down after 3000']);
  });

  it('with a bound of 0 calls the target down at the first failed check', () => {
    const { at, events } = watchFixture(0);
    expect(at(5, false)).toBe('down');
    expect(events).toEqual(['down after 0']);
  });

  it('does not count time the pod itself was starved (a sampling gap) against the target', () => {
    const { at, events } = watchFixture(3_000, 1_000);
    expect(at(0, true)).toBe('up');
    expect(at(250, false)).toBe('unhealthy');
    // A 5 s stall of the pod: its unread PING reply says nothing about Redis.
    expect(at(5_250, false)).toBe('unhealthy');
    expect(at(5_500, false)).toBe('unhealthy');
    expect(events).toEqual([]);
    // Sampled on time from then on, the outage counts from the end of the stall.
    for (let t = 5_750; t < 8_250; t += 250) expect(at(t, false)).toBe('unhealthy');
    expect(at(8_250, false)).toBe('down');
    expect(events).toEqual(['down after 3000']);
  });
});
