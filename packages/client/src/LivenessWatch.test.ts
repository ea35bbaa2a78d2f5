import { describe, expect, it } from 'vitest';
import { FakeClientClock } from './testing/FakeClientClock.js';
import { LivenessWatch } from './LivenessWatch.js';

describe('LivenessWatch', () => {
  it('gives up a socket silent for the ping interval plus the grace, once', () => {
    const clock = new FakeClientClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 500, () => void silent++);
    watch.setInterval(1000);
    clock.advance(1499);
    expect(silent).toBe(0);
    clock.advance(1);
    expect(silent).toBe(1);
    clock.advance(10_000);
    expect(silent).toBe(1);
  });

  it('moves the deadline on with every frame heard', () => {
    const clock = new FakeClientClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 500, () => void silent++);
    watch.setInterval(1000);
    for (let i = 0; i < 20; i++) {
      clock.advance(1000);
      watch.heard();
    }
    expect(silent).toBe(0);
    clock.advance(1500);
    expect(silent).toBe(1);
  });

  it('uses the default interval until the welcome names one, and stops when told', () => {
    const clock = new FakeClientClock();
    let silent = 0;
    const watch = new LivenessWatch(clock, 10_000, () => void silent++);
    expect(watch.boundMs).toBe(35_000);
    clock.advance(34_999);
    expect(silent).toBe(0);
    watch.stop();
    clock.advance(100_000);
    expect(silent).toBe(0);
  });
});
