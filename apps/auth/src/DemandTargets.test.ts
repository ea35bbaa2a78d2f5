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

  it("registers a stream placed on a JetStream target in the JetStream demand target, sharing a Redis target's connection", async () => {
    const jetStream = 'nats://n1:4222/TASKS';
    const mixed = [targets[0] ?? '', jetStream];
    const opened: string[] = [];
    const beats = new Map<string, string[]>();
    const demand = new DemandTargets(
      mixed,
      (target) => {
        opened.push(target);
        return {
          heartbeat: (streams) => (beats.set(target, [...(beats.get(target) ?? []), ...streams]), Promise.resolve()),
          close: () => undefined,
        };
      },
      targets[0],
    );
    const streams = Array.from({ length: 20 }, (_, i) => `evm:${i}:heads`);
    for (const stream of streams) await demand.register(stream, 1_000);
    // Both placements happened, and every stream went to the one Redis, over one connection.
    expect(new Set(streams.map((s) => placeStream(s, mixed)))).toEqual(new Set(mixed));
    expect(opened).toEqual([targets[0]]);
    expect(beats.get(targets[0] ?? '')?.sort()).toEqual([...streams].sort());
  });

  it('refuses, as a rejected registration, a stream on a JetStream target with no demand target', async () => {
    const demand = new DemandTargets(['nats://n1:4222/TASKS'], () => {
      throw new Error('no Redis should be opened');
    });
    await expect(demand.register('evm:x', 1_000)).rejects.toThrow(/no AUTH_JETSTREAM_DEMAND_TARGET for evm:x on nats:\/\/n1:4222\/TASKS/);
  });
});
