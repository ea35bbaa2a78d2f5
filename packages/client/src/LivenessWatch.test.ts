import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { LivenessWatch } from './LivenessWatch.js';

describe('LivenessWatch', () => {
  it('gives up a socket silent for the ping interval plus the grace, once', () => {
    const clock = new ManualClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 500, () => void silent++);
    watch.setInterval(1000);
    clock.advanceSync(1499);
    expect(silent).toBe(0);
    clock.advanceSync(1);
    expect(silent).toBe(1);
    clock.advanceSync(10_000);
    expect(silent).toBe(1);
  });

  it('moves the deadline on with every frame heard', () => {
    const clock = new ManualClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 500, () => void silent++);
    watch.setInterval(1000);
    for (let i = 0; i < 20; i++) {
      clock.advanceSync(1000);
      watch.heard();
    }
    expect(silent).toBe(0);
    clock.advanceSync(1500);
    expect(silent).toBe(1);
  });

  it('uses the default interval until the welcome names one, and stops when told', () => {
    const clock = new ManualClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 10_000, () => void silent++);
    expect(watch.boundMs).toBe(35_000);
    clock.advanceSync(34_999);
    expect(silent).toBe(0);
    watch.stop();
    clock.advanceSync(100_000);
    expect(silent).toBe(0);
  });
});
