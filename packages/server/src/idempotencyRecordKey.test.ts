import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineStream } from '@streamgate/protocol';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';
import { hashSlotPart } from '@streamgate/redis';
import { idempotencyRecordKey } from './idempotencyRecordKey.js';

// Names a stream may have (letters, digits, _ . : { } - /), with every brace placement that
// changes what Redis Cluster hashes.
const STREAMS = ['orders:42', '{tenant7}:orders:42', 'orders:{42}:x', 'a{b', 'a{b}c}d', 'x{', '{{a}}', 'run/7.log'];

describe('hashSlotPart', () => {
  it.each([
    ['orders:42', 'orders:42'],
    ['{tenant7}:orders:42', 'tenant7'],
    ['orders:{42}:x', '42'],
    ['a{b', 'a{b'],
    ['{}x{y}', '{}x{y}'],
    ['{{a}}', '{a'],
  ])('of %s is %s', (name, part) => {
    expect(hashSlotPart(name)).toBe(part);
  });
});

describe('idempotency record keys on Redis Cluster (single node, every slot local)', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis({ args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'] });
    redis = server.client();
    await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await waitFor(async () => String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'), {
      timeoutMs: 10_000,
      message: 'the single-node cluster serves every slot',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(STREAMS)('the record of %s hashes to the stream slot', async (stream) => {
    const record = idempotencyRecordKey(stream, 'any:key#with{braces}');
    if (!record.ok) throw new Error(record.reason);
    expect(await redis.call('CLUSTER', 'KEYSLOT', record.key)).toBe(await redis.call('CLUSTER', 'KEYSLOT', stream));
  });

  it.each(['a}b', 'x{}y', '{}x{y}', 'z}{'])('refuses %s, which hashes whole and contains "}"', (stream) => {
    expect(idempotencyRecordKey(stream, 'k')).toMatchObject({ ok: false, reason: expect.stringMatching(/hash tag/) as string });
  });

  it('publishes idempotently where a script over two slots is refused', async () => {
    // The check this test relies on: cluster mode refuses a script whose keys span slots.
    await expect(redis.eval("return redis.call('GET', KEYS[1])", 2, 'a', 'b')).rejects.toThrow(/CROSSSLOT/);
    const publisher = createPublisher({ redis });
    for (const name of STREAMS) {
      const stream = defineStream<number>(name);
      const first = await publisher.publish(stream, 1, { idempotencyKey: 'once' });
      const again = await publisher.publish(stream, 1, { idempotencyKey: 'once' });
      if (!first.ok) throw new Error(`${name}: ${first.error.message}`);
      expect(again).toEqual({ ok: true, id: first.id, duplicate: true });
    }
  });
});
