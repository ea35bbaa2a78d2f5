import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_PUBLISH_LUA, liveChannel } from '@streamgate/redis';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { RedisStreamSource } from './RedisStreamSource.js';
import { testSourceOptions } from './testing/testSourceOptions.js';

// `g` tells the relay of a DEL at once: it looks at the key and finds it missing.
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ args: ['--notify-keyspace-events', 'Kgt'] });
});
afterAll(async () => {
  await redis?.stop();
});

/** Our writers' script (docs/protocol.md §11): XADD, then the live message with the previous id. */
const WRITE = `${LIVE_PUBLISH_LUA}
local prev = live_prev(KEYS[1])
local id = redis.call('XADD', KEYS[1], '*', 'data', ARGV[2])
live_publish(ARGV[1], 'PUBLISH', prev, id, ARGV[2])
return id`;

describe('RedisStreamSource with a key deleted, seen missing, then written again with higher ids', () => {
  it.each(['notify', 'batch'] as const)(
    'sends the reset before the new incarnation’s first entry and that entry once, from a foreign XADD and from a live message (%s)',
    async (readMode) => {
      const log: string[] = [];
      const src = new RedisStreamSource(
        testSourceOptions(redis.url, `vanished-${readMode}`, {
          readMode,
          // Only the hints and the look at keys seen missing can act: no periodic round in the test's time.
          recreationCheckIntervalMs: 600_000,
          listener: {
            entries: (stream, entries) => log.push(...entries.map((e) => `${stream} ${e.id}`)),
            failed: (stream) => log.push(`${stream} failed`),
            reset: (stream) => log.push(`${stream} reset`),
          },
        }),
      );
      const r = redis.client();
      try {
        await waitFor(() => src.readMode === readMode && src.healthy, { timeoutMs: 5_000, message: `never read in ${readMode} mode` });
        const keys = [`vn-foreign-${readMode}`, `vn-live-${readMode}`];
        const [foreignKey, liveKey] = keys as [string, string];
        for (const key of keys) src.watch(key, String(await r.xadd(key, '*', 'data', '"old"')));
        await waitFor(async () => (await src.inspect(keys[0] as string)).ok, { timeoutMs: 5_000, message: 'inspect failed' });
        for (const key of keys) await r.del(key);
        // The source has looked at them since: each inspect is a sighting of the key missing.
        for (const key of keys) expect((await src.inspect(key)).ok).toBe(true);
        // `*` ids: above the old entries, so a read from the old position would return them.
        const foreign = String(await r.xadd(foreignKey, '*', 'data', '"new"'));
        const live = String(await r.eval(WRITE, 1, liveKey, liveChannel(liveKey, 0) ?? '', '"new"'));
        const settled = () => keys.every((key) => log.filter((l) => l.startsWith(`${key} `)).length >= 2);
        await waitFor(settled, { timeoutMs: 5_000, message: `the new incarnations were not both delivered: ${log.join(', ')}` });
        // Anything late (a second copy) comes from a read already out: let one more written entry pass it.
        const after = String(await r.xadd(foreignKey, '*', 'data', '"after"'));
        await waitFor(() => log.includes(`${foreignKey} ${after}`), { timeoutMs: 5_000, message: 'the entry after was not delivered' });
        expect(log.filter((l) => l.startsWith(`${foreignKey} `))).toEqual([
          `${foreignKey} reset`,
          `${foreignKey} ${foreign}`,
          `${foreignKey} ${after}`,
        ]);
        expect(log.filter((l) => l.startsWith(`${liveKey} `))).toEqual([`${liveKey} reset`, `${liveKey} ${live}`]);
      } finally {
        await src.close();
        r.disconnect();
      }
    },
  );
});
