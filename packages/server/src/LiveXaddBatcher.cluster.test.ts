import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '@streamgate/redis';
import { startRedisCluster } from '@streamgate/testkit';
import type { RedisCluster } from '@streamgate/testkit';
import { LiveXaddBatcher } from './LiveXaddBatcher.js';

/** EVALSHA and EVAL calls each primary has run so far. */
async function scriptCalls(cluster: RedisCluster): Promise<number> {
  let calls = 0;
  for (const node of await cluster.primaries()) {
    const stats = await node.client().info('commandstats');
    for (const name of ['evalsha', 'eval']) calls += Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  }
  return calls;
}

const streams = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('LiveXaddBatcher on a Redis Cluster (3 primaries)', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
    client = cluster.cluster();
    await client.set('warm', '1');
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('writes a tick of streams on many slots in one script call per node, each entry once', async () => {
    const names = streams('spread:', 60);
    expect(new Set(names.map(keySlot)).size).toBeGreaterThan(30);
    const batcher = new LiveXaddBatcher(client);
    // The client learns the slots, and both scripts are loaded, before the counted tick.
    await Promise.all(names.map((stream) => batcher.write({ stream, maxLen: 100, data: '"warm"' })));
    const before = await scriptCalls(cluster);
    const ids = await Promise.all(names.map((stream) => batcher.write({ stream, maxLen: 100, data: '"counted"' })));
    expect(await scriptCalls(cluster)).toBe(before + 3);
    for (const [i, stream] of names.entries()) {
      const entries = (await client.xrange(stream, '-', '+')).map(([id, fields]) => [id, fields[1]]);
      expect(entries).toHaveLength(2);
      expect(entries[1]).toEqual([ids[i], '"counted"']);
    }
  });

  it('writes each entry once when a stale slot table sends a batch to a node that refuses it', async () => {
    const names = streams('stale:', 30);
    const batcher = new LiveXaddBatcher(client);
    await Promise.all(names.map((stream) => batcher.write({ stream, maxLen: 100, data: '"warm"' })));
    // Every slot said to be on one node: its batches hold keys the other nodes serve, and are
    // answered MOVED before the script runs, until ioredis gives up redirecting them.
    const one = client.slots[0]?.[0] ?? '';
    for (let slot = 0; slot < client.slots.length; slot++) client.slots[slot] = [one];
    const ids = await Promise.all(names.map((stream) => batcher.write({ stream, maxLen: 100, data: '"after"' })));
    for (const [i, stream] of names.entries()) {
      const entries = (await client.xrange(stream, '-', '+')).map(([id, fields]) => [id, fields[1]]);
      expect(entries).toEqual([
        [entries[0]?.[0], '"warm"'],
        [ids[i], '"after"'],
      ]);
    }
  });
});
