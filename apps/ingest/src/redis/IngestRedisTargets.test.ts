import { describe, expect, it } from 'vitest';
import { placeStream } from '@streamgate/redis';
import { MemoryDemandSource, MemoryLeaseStore, MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import { IngestRedisTargets } from './IngestRedisTargets.js';

const TARGETS = ['redis://r0:6379/0', 'redis://r1:6379/0', 'redis://r2:6379/0'];

function fakes(targets: readonly string[]) {
  const byTarget = new Map(
    targets.map((t) => {
      const writer = new MemoryStreamWriter();
      return [t, { writer, leases: new MemoryLeaseStore(writer, () => 0), demand: new MemoryDemandSource() }] as const;
    }),
  );
  return { byTarget, targets: new IngestRedisTargets(byTarget) };
}

const streams = Array.from({ length: 30 }, (_, i) => `evm:c${i}:heads`);

describe('IngestRedisTargets', () => {
  it('leases, writes and checkpoints each stream on the target placeStream names, and nowhere else', async () => {
    const { byTarget, targets } = fakes(TARGETS);
    for (const stream of streams) {
      const lease = await targets.leases.acquire(stream, 'w', 1_000);
      if (lease === null) throw new Error(`no lease for ${stream}`);
      expect(await targets.leases.renew(lease, 'w', 1_000)).toBe(true);
      expect(
        await targets.writer.write(
          { key: stream, token: lease.token },
          { entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: stream } },
        ),
      ).toMatchObject({ ok: true, written: 1 });
      expect((await targets.writer.loadState({ key: stream, token: lease.token })).get('cp')).toBe(stream);
    }
    const used = new Set<string>();
    for (const stream of streams) {
      const home = placeStream(stream, TARGETS);
      used.add(home);
      expect(targets.targetOf(stream)).toBe(home);
      for (const [target, stores] of byTarget) {
        expect(stores.writer.streams.has(stream)).toBe(target === home);
        expect(stores.writer.fences.has(stream)).toBe(target === home);
      }
    }
    // 30 streams over 3 targets: all of them take some.
    expect(used.size).toBe(3);
  });

  it('releases a lease on the stream’s target, so another owner can take it there', async () => {
    const { targets } = fakes(TARGETS);
    const lease = await targets.leases.acquire('s', 'a', 1_000);
    if (lease === null) throw new Error('no lease');
    expect(await targets.leases.acquire('s', 'b', 1_000)).toBeNull();
    await targets.leases.release(lease, 'a');
    expect(await targets.leases.acquire('s', 'b', 1_000)).toMatchObject({ key: 's', token: 2 });
  });

  it('unites the demand of every target and reports one that cannot be read', async () => {
    const { byTarget, targets } = fakes(TARGETS);
    const stores = [...byTarget.values()];
    stores[0]?.demand.keys.add('x');
    stores[1]?.demand.keys.add('y');
    if (stores[2] !== undefined) stores[2].demand.failing = true;
    const errors: string[] = [];
    const demand = targets.demand((target) => errors.push(target));
    expect(await demand.demanded()).toEqual(new Set(['x', 'y']));
    expect(errors).toEqual([TARGETS[2]]);
  });

  it('sends everything to a single target (an instance or a cluster) without hashing', async () => {
    const { byTarget, targets } = fakes(['redis-cluster://seed:7000']);
    expect(targets.targetOf('anything')).toBe('redis-cluster://seed:7000');
    const lease = await targets.leases.acquire('anything', 'w', 1_000);
    expect(lease).not.toBeNull();
    expect(byTarget.get('redis-cluster://seed:7000')?.writer.fences.get('anything')).toBe(1);
  });

  it('refuses an empty target list', () => {
    expect(() => new IngestRedisTargets(new Map())).toThrow(RangeError);
  });
});
