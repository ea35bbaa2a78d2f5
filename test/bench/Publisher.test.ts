import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { nowMs } from './openLoop.js';
import { createPublisher } from './Publisher.js';

describe("the bench's streamgate publisher", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('times each write from its intended send time to its reply, and starts over when taken', async () => {
    const publisher = await createPublisher('relay', redis.url, 0);
    try {
      // Intended 20 ms ago: every write's latency holds at least those 20 ms.
      const intended = nowMs() - 20;
      for (let seq = 0; seq < 10; seq++) publisher.publish('bench:writes', seq, intended);
      // Taken until all ten replies were handled: each take holds only what came since the last.
      let count = 0;
      let fastest = Infinity;
      await waitFor(
        () => {
          const taken = publisher.takeWriteLatency?.();
          if (taken !== undefined && taken.totalCount > 0) {
            count += taken.totalCount;
            fastest = Math.min(fastest, taken.minNonZeroValue);
          }
          return count >= 10;
        },
        { timeoutMs: 5_000, message: 'the ten writes were never acknowledged' },
      );
      expect(count).toBe(10);
      expect(fastest).toBeGreaterThanOrEqual(20_000);
      expect(publisher.takeWriteLatency?.().totalCount).toBe(0);
    } finally {
      await publisher.close();
    }
  });
});
