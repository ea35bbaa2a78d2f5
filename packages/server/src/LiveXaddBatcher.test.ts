import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveChannel } from '@streamgate/redis';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { LiveXaddBatcher } from './LiveXaddBatcher.js';

const evalshaCalls = async (redis: Redis): Promise<number> =>
  Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);

describe('LiveXaddBatcher (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  let subscriber: Redis;
  const messages: string[] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = server.client();
    subscriber = server.client();
    subscriber.on('message', (_channel: string, message: string) => messages.push(message));
    await subscriber.subscribe(liveChannel('b:1', 0) ?? '', liveChannel('b:2', 0) ?? '');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('writes the entries of one tick in one script call, each published with the id before it', async () => {
    const batcher = new LiveXaddBatcher(redis);
    await batcher.write({ stream: 'b:1', maxLen: 100, data: '"warm"' });
    await waitFor(() => messages.length === 1, { timeoutMs: 5_000, message: 'the first live message' });
    messages.length = 0;
    const before = await evalshaCalls(redis);
    const ids = await Promise.all([
      batcher.write({ stream: 'b:1', maxLen: 100, data: '{"n":1}' }),
      batcher.write({ stream: 'b:2', maxLen: 100, data: '{"n":2}' }),
      batcher.write({ stream: 'b:1', maxLen: 100, data: '{"n":3}' }),
    ]);
    // One call for the three, and the INFO above and below.
    expect((await evalshaCalls(redis)) - before).toBe(1);
    const [first, second, third] = ids as string[];
    const [warm] = (await redis.xrange('b:1', '-', '+'))[0] ?? [];
    expect((await redis.xrange('b:1', '-', '+')).map(([id]) => id)).toEqual([warm, first, third]);
    await waitFor(() => messages.length === 3, { timeoutMs: 5_000, message: 'three live messages' });
    expect(messages).toEqual([`${warm} ${first} {"n":1}`, `0-0 ${second} {"n":2}`, `${first} ${third} {"n":3}`]);
  });

  it('fails only the entry whose key holds another type; the others are written', async () => {
    await redis.set('b:string', 'x');
    const batcher = new LiveXaddBatcher(redis);
    const settled = await Promise.allSettled([
      batcher.write({ stream: 'b:ok1', maxLen: 100, data: '1' }),
      batcher.write({ stream: 'b:string', maxLen: 100, data: '2' }),
      batcher.write({ stream: 'b:ok2', maxLen: 100, data: '3' }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rejected = settled[1];
    expect(rejected?.status === 'rejected' && String(rejected.reason)).toMatch(/WRONGTYPE/);
    expect(await redis.xlen('b:ok1')).toBe(1);
    expect(await redis.xlen('b:ok2')).toBe(1);
  });

  it('sends a tick of large entries in several calls, every entry written in order', async () => {
    const batcher = new LiveXaddBatcher(redis);
    const big = JSON.stringify('x'.repeat(100 * 1024));
    await batcher.write({ stream: 'b:big', maxLen: 100, data: '0' });
    const before = await evalshaCalls(redis);
    const ids = await Promise.all(Array.from({ length: 5 }, () => batcher.write({ stream: 'b:big', maxLen: 100, data: big })));
    // 100 KiB each, about 256 KiB per call: three calls (2 + 2 + 1).
    expect((await evalshaCalls(redis)) - before).toBe(3);
    expect((await redis.xrange('b:big', '-', '+')).map(([id]) => id).slice(1)).toEqual(ids);
  });

  it('loads the script itself on a server that does not know it', async () => {
    await redis.script('FLUSH');
    const id = await new LiveXaddBatcher(redis).write({ stream: 'b:3', maxLen: 100, data: '4' });
    expect((await redis.xrange('b:3', '-', '+'))[0]?.[0]).toBe(id);
  });
});
