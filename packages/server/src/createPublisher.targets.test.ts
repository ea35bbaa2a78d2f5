import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineStream } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import { startRedisInstances } from '@streamgate/testkit';
import type { RedisInstances } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';

const tasks = defineStream<{ n: number }>('task');

describe('createPublisher over several standalone instances', () => {
  let instances: RedisInstances;

  beforeAll(async () => {
    instances = await startRedisInstances(3);
  });
  afterAll(async () => {
    await instances?.stop();
  });

  it('writes each stream to its placeStream instance, and only there', async () => {
    const publisher = createPublisher({ targets: instances.urls });
    try {
      const names = Array.from({ length: 60 }, (_, i) => tasks.for(String(i)));
      for (const [i, ref] of names.entries()) expect((await publisher.publish(ref, { n: i })).ok).toBe(true);
      const readers = instances.servers.map((s) => s.client());
      for (const ref of names) {
        const home = placeStream(ref.name, instances.urls);
        const lengths = await Promise.all(readers.map((r) => r.xlen(ref.name)));
        expect(lengths).toEqual(instances.urls.map((url) => (url === home ? 1 : 0)));
      }
      await Promise.all(readers.map((r) => r.quit()));
      const used = new Set(names.map((ref) => placeStream(ref.name, instances.urls)));
      expect(used.size).toBe(3);
    } finally {
      await publisher.close();
    }
  });

  it('keeps publishing to the other instances while one is down', async () => {
    const publisher = createPublisher({ targets: instances.urls, timeoutMs: 300 });
    const down = instances.servers[2];
    if (down === undefined) throw new Error('no third instance');
    try {
      const names = Array.from({ length: 20 }, (_, i) => tasks.for('down', String(i)));
      await down.kill();
      for (const ref of names) {
        const result = await publisher.publish(ref, { n: 0 });
        if (placeStream(ref.name, instances.urls) === down.url) {
          expect(result).toMatchObject({ ok: false, error: { code: 'redis_unavailable', retryable: true, written: 'no' } });
        } else {
          expect(result.ok).toBe(true);
        }
      }
    } finally {
      await publisher.close();
      await down.restart();
    }
  });

  it('refuses a bad, credentialed or repeated target at construction', () => {
    expect(() => createPublisher({ targets: [] })).toThrow(/at least one/);
    expect(() => createPublisher({ targets: ['redis://a:6379/0', 'redis://A'] })).toThrow(/twice/);
    expect(() => createPublisher({ targets: 'redis://u:pw@a' })).toThrow(/without credentials/);
  });
});
