import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { RedisStreamSource } from './RedisStreamSource.js';
import { testSourceOptions } from './testing/testSourceOptions.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** A source whose listener writes down resets and entries in the order they came. */
function source(recreationCheckIntervalMs: number) {
  const log: string[] = [];
  const recreated: string[] = [];
  const reads: string[] = [];
  const src = new RedisStreamSource(
    testSourceOptions(redis.url, 'recreated-test', {
      listener: {
        entries: (stream, entries) => log.push(...entries.map((e) => `${stream} ${e.id}`)),
        failed: (stream) => log.push(`${stream} failed`),
        reset: (stream) => log.push(`${stream} reset`),
      },
      onRead: (kind) => reads.push(kind),
      onRecreated: (stream) => recreated.push(stream),
      recreationCheckIntervalMs,
    }),
  );
  return { src, log, recreated, reads };
}

describe('RedisStreamSource with a key deleted and recreated under its reader', () => {
  it('finds the new incarnation by its periodic check, resets, then delivers it from its first entry', async () => {
    const { src, log, recreated, reads } = source(100);
    const r = redis.client();
    try {
      const old = String(await r.xadd('rc-periodic', '*', 'data', '0'));
      src.watch('rc-periodic', old);
      await waitFor(() => src.healthy && reads.includes('check'), { timeoutMs: 5_000, message: 'the source never checked its keys' });
      await r.del('rc-periodic');
      for (const id of ['1-1', '1-2', '1-3']) await r.xadd('rc-periodic', id, 'data', id);
      await waitFor(() => log.length >= 4, { timeoutMs: 5_000, message: 'the new incarnation was never noticed' });
      await r.xadd('rc-periodic', '1-4', 'data', '1-4');
      await waitFor(() => log.length >= 5, { timeoutMs: 5_000, message: '1-4 was never delivered' });
      expect(log).toEqual(['rc-periodic reset', 'rc-periodic 1-1', 'rc-periodic 1-2', 'rc-periodic 1-3', 'rc-periodic 1-4']);
      expect(recreated).toEqual(['rc-periodic']);
    } finally {
      await src.close();
    }
  });

  it('acts at once on what a resume’s inspect shows, long before the next periodic check', async () => {
    const { src, log } = source(600_000);
    const r = redis.client();
    try {
      const old = String(await r.xadd('rc-inspect', '*', 'data', '0'));
      src.watch('rc-inspect', old);
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      await r.del('rc-inspect');
      await r.xadd('rc-inspect', '1-1', 'data', '1-1');
      const inspected = await src.inspect('rc-inspect', old);
      expect(inspected.ok && inspected.value.info?.lastGeneratedId).toBe('1-1');
      expect(log).toEqual(['rc-inspect reset']);
      await waitFor(() => log.length >= 2, { timeoutMs: 5_000, message: 'the new incarnation was not read' });
      expect(log).toEqual(['rc-inspect reset', 'rc-inspect 1-1']);
    } finally {
      await src.close();
    }
  });

  it('sees a key that vanished and came back with higher ids as a new incarnation, and a first creation as none', async () => {
    const { src, log } = source(50);
    const r = redis.client();
    try {
      src.watch('rc-unborn', '0-0');
      const old = String(await r.xadd('rc-vanish', '*', 'data', '0'));
      src.watch('rc-vanish', old);
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      await r.del('rc-vanish');
      // Wait until a check has seen it missing: the state is kept by the source, not Redis.
      await waitFor(async () => (await src.inspect('rc-vanish')).ok, { timeoutMs: 5_000, message: 'inspect failed' });
      const born = String(await r.xadd('rc-unborn', '*', 'data', 'u'));
      const back = String(await r.xadd('rc-vanish', '*', 'data', 'v'));
      // The entry may be read live before the reset too (its id is above the old position): wait
      // for the reset and the re-read that follows it, whichever order the first two came in.
      const tail = () => log.filter((l) => l.startsWith('rc-vanish')).slice(-2);
      await waitFor(() => JSON.stringify(tail()) === JSON.stringify(['rc-vanish reset', `rc-vanish ${back}`]), {
        timeoutMs: 5_000,
        message: 'the comeback was not noticed',
      });
      expect(log.filter((l) => l.startsWith('rc-vanish')).slice(-2)).toEqual(['rc-vanish reset', `rc-vanish ${back}`]);
      expect(log).toContain(`rc-unborn ${born}`);
      expect(log).not.toContain('rc-unborn reset');
    } finally {
      await src.close();
    }
  });
});
