import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, startRedisCluster } from '@streamgate/testkit';
import type { RedisCluster, RedisServer } from '@streamgate/testkit';
import type { Redis } from 'ioredis';
import { openRedis } from '@streamgate/redis';
import { redisIncarnationProbe } from './redisIncarnationProbe.js';

describe('redisIncarnationProbe on one Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('sees each key as XINFO STREAM, EXISTS and XRANGE of the read entry would', async () => {
    await client.xadd('p:live', '1-1', 'data', 'a');
    await client.xadd('p:live', '2-1', 'data', 'b');
    await client.xadd('p:trimmed', '1-1', 'data', 'a');
    await client.xadd('p:trimmed', '2-1', 'data', 'b');
    await client.xtrim('p:trimmed', 'MAXLEN', 1);
    await client.xadd('p:deleted', '1-1', 'data', 'a');
    await client.xadd('p:deleted', '2-1', 'data', 'b');
    await client.xdel('p:deleted', '2-1');
    await client.xadd('p:empty', '5-0', 'data', 'a');
    await client.xtrim('p:empty', 'MAXLEN', 0);
    await client.set('p:string', 'x');
    const errors: Error[] = [];
    const probe = redisIncarnationProbe(
      () => client,
      (e) => errors.push(e),
    );
    const sightings = await probe(
      ['p:live', 'p:trimmed', 'p:deleted', 'p:empty', 'p:string', 'p:missing'],
      ['2-1', '1-1', '2-1', '5-0', '0-0', '0-0'],
    );
    expect(sightings).toEqual([
      {
        exists: true,
        cursorStored: true,
        lastGeneratedId: '2-1',
        entriesAdded: 2,
        firstEntryId: '1-1',
        maxDeletedEntryId: '0-0',
        length: 2,
      },
      {
        exists: true,
        cursorStored: false,
        lastGeneratedId: '2-1',
        entriesAdded: 2,
        firstEntryId: '2-1',
        maxDeletedEntryId: '0-0',
        length: 1,
      },
      {
        exists: true,
        cursorStored: false,
        lastGeneratedId: '2-1',
        entriesAdded: 2,
        firstEntryId: '1-1',
        maxDeletedEntryId: '2-1',
        length: 1,
      },
      {
        exists: true,
        cursorStored: false,
        lastGeneratedId: '5-0',
        entriesAdded: 1,
        firstEntryId: null,
        maxDeletedEntryId: '0-0',
        length: 0,
      },
      null,
      { exists: false },
    ]);
    expect(errors).toEqual([]);
  });

  it('answers every key of a group larger than one script takes, in order', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => `p:many:${i}`);
    for (const [i, key] of keys.entries()) if (i % 2 === 0) await client.xadd(key, `${i + 1}-0`, 'data', 'x');
    const probe = redisIncarnationProbe(
      () => client,
      (e) => {
        throw e;
      },
    );
    const sightings = await probe(
      keys,
      keys.map((_, i) => `${i + 1}-0`),
    );
    expect(sightings.map((s) => (s === null ? 'null' : s.exists ? s.lastGeneratedId : 'missing'))).toEqual(
      keys.map((_, i) => (i % 2 === 0 ? `${i + 1}-0` : 'missing')),
    );
  });

  it('leaves every key unjudged while the connection is not ready', async () => {
    const closed = redis.client();
    closed.disconnect();
    const probe = redisIncarnationProbe(
      () => closed,
      () => undefined,
    );
    expect(await probe(['p:live'], ['1-1'])).toEqual([null]);
  });
});

describe('redisIncarnationProbe on a Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('asks each slot with its own script, on the node that serves it', async () => {
    // Keys on every primary, several per node and so several slots per node, and two in one slot.
    const keys = [...(await cluster.keysOnEveryPrimary('c:k', 9)), '{c:tag}a', '{c:tag}b'];
    const client = openRedis(cluster.url);
    try {
      for (const key of keys) await client.xadd(key, '3-0', 'data', 'x');
      const errors: Error[] = [];
      const probe = redisIncarnationProbe(
        () => client,
        (e) => errors.push(e),
      );
      const sightings = await probe([...keys, 'c:missing'], [...keys.map(() => '3-0'), '0-0']);
      expect(errors).toEqual([]);
      expect(sightings).toEqual([
        ...keys.map(() => ({
          exists: true,
          cursorStored: true,
          lastGeneratedId: '3-0',
          entriesAdded: 1,
          firstEntryId: '3-0',
          maxDeletedEntryId: '0-0',
          length: 1,
        })),
        { exists: false },
      ]);
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
