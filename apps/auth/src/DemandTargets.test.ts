import { describe, expect, it } from 'vitest';
import { placeStream } from '@streamgate/redis';
import { DemandTargets } from './DemandTargets.js';

const targets = ['redis://r0:6379/0', 'redis://r1:6379/0', 'redis://r2:6379/0'];

describe('DemandTargets', () => {
  it('registers each stream on its placeStream target, opening each target once, on first use', async () => {
    const opened: string[] = [];
    const beats = new Map<string, string[]>();
    const closed: string[] = [];
    const demand = new DemandTargets(targets, (target) => {
      opened.push(target);
      return {
        heartbeat: (streams) => (beats.set(target, [...(beats.get(target) ?? []), ...streams]), Promise.resolve()),
        close: () => void closed.push(target),
      };
    });
    expect(opened).toEqual([]);
    const streams = Array.from({ length: 30 }, (_, i) => `evm:${i}:heads`);
    for (const stream of streams) await demand.register(stream, 1_000);
    expect(opened.sort()).toEqual([...targets].sort());
    for (const stream of streams) expect(beats.get(placeStream(stream, targets))).toContain(stream);
    expect([...beats.values()].flat()).toHaveLength(30);
    demand.close();
    expect(closed.sort()).toEqual([...targets].sort());
  });
});
