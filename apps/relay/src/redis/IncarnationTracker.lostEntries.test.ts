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

// What a promoted replica that had not copied the last entries looks like to a reader: its
// connections dropped, then the same key, never missing, its last id and entries-added above the
// reader's again after new writes, only the entries the reader read past the copy gone. One MULTI
// builds that on a real server.
describe('RedisStreamSource with entries it read lost under it (a failover to a lagging replica)', () => {
  it('notices by the entry at its position, resets, and delivers the stream again from its start', async () => {
    const log: string[] = [];
    const src = new RedisStreamSource(
      testSourceOptions(redis.url, 'lost-entries-test', {
        listener: {
          entries: (stream, entries) => log.push(...entries.map((e) => e.id)),
          failed: () => log.push('failed'),
          reset: () => log.push('reset'),
        },
        recreationCheckIntervalMs: 100,
        readMode: 'batch',
        blockMs: 200,
      }),
    );
    const r = redis.client();
    try {
      for (const id of ['1-1', '1-2', '1-3', '1-4', '1-5']) await r.xadd('lost', id, 'data', id);
      src.watch('lost', '0-0');
      await waitFor(() => log.length === 5, { timeoutMs: 5_000, message: 'the first entries were never read' });
      // The relay's connections drop as they would when its server dies, in the same transaction,
      // so that nothing it reads after coming back predates the loss.
      const tx = r.multi().del('lost');
      for (const id of ['1-1', '1-2', '1-3', '1-9', '1-10', '1-11']) tx.xadd('lost', id, 'data', id);
      tx.call('CLIENT', ['KILL', 'USER', 'default', 'SKIPME', 'yes']);
      await tx.exec();
      await waitFor(() => log.includes('reset') && log.at(-1) === '1-11' && log.length > 8, {
        timeoutMs: 5_000,
        message: `the lost entries were never noticed: ${log.join(' ')}`,
      });
      // 1-9.. are read after 1-5 (the reader is past them), maybe before the check sees the loss:
      // what follows the reset is the whole stream as it now is.
      expect(log.slice(log.indexOf('reset') + 1)).toEqual(['1-1', '1-2', '1-3', '1-9', '1-10', '1-11']);
      expect(log.slice(0, 5)).toEqual(['1-1', '1-2', '1-3', '1-4', '1-5']);
    } finally {
      await src.close();
    }
  });
});
