import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { PublisherConnection } from './PublisherConnection.js';

describe('PublisherConnection (real redis-server)', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('does not auto-pipeline, though the client it was duplicated from does', async () => {
    // LiveXaddBatcher sends one script per tick; auto-pipelining would hold each tick's script
    // until the previous reply came back (PublisherConnection says what that cost).
    const template = server.client({ enableAutoPipelining: true, lazyConnect: true });
    const connection = PublisherConnection.acquire(template);
    try {
      const wait = await connection.ready(5_000);
      if (!wait.ok) throw new Error(wait.reason);
      expect(wait.redis.options.enableAutoPipelining).toBe(false);
      expect(wait.redis).not.toBe(template);
      // Both ticks' writes are sent as soon as they are made, not one in flight at a time.
      const first = wait.redis.ping();
      await new Promise<void>((resolve) => setImmediate(resolve));
      const second = wait.redis.ping();
      expect(wait.redis.autoPipelineQueueSize).toBe(0);
      await expect(Promise.all([first, second])).resolves.toEqual(['PONG', 'PONG']);
      expect(template.options.enableAutoPipelining).toBe(true);
    } finally {
      await connection.release();
      template.disconnect();
    }
  });
});
