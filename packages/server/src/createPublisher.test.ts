import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEntryFields, defineStream } from '@streamgate/protocol';
import { createPublisher } from './createPublisher.js';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';

const orders = defineStream('orders', z.object({ id: z.string(), qty: z.number().int().positive() }));
const notes = defineStream<{ text: string }>('notes');

describe('createPublisher (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = server.client({ lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('XADDs the payload in the entry format and returns the id', async () => {
    const publisher = createPublisher({ redis });
    const result = await publisher.publish(orders.for('eu'), { id: 'o-1', qty: 2 });
    if (!result.ok) throw new Error(result.error.message);
    const entries = await redis.xrange('orders:eu', '-', '+');
    expect(entries).toHaveLength(1);
    const [id, fields] = entries[0] ?? ['', []];
    expect(id).toBe(result.id);
    expect(decodeEntryFields(fields)).toEqual({ ok: true, json: '{"id":"o-1","qty":2}' });
  });

  it('writes publishes made without awaiting in the order they were made, plain, idempotent and waiting mixed', async () => {
    const publisher = createPublisher({ redis });
    // Warm: a script the node does not know yet answers NOSCRIPT and is sent again, behind any
    // write sent meanwhile (see writeEntry).
    await publisher.publish(notes.for('warm'), { text: 'w' });
    await publisher.publish(notes.for('warm'), { text: 'w' }, { idempotencyKey: 'warm' });
    const stream = notes.for('order');
    const texts = ['a', 'b', 'c', 'd', 'e', 'f'];
    // Plain publishes share a script call sent on the next tick; the idempotent one and the one
    // that waits for replicas (answered not_replicated here: this server has none) bypass it.
    const results = await Promise.all(
      texts.map((text, i) =>
        publisher.publish(
          stream,
          { text },
          i === 2 ? { idempotencyKey: 'order-c' } : i === 4 ? { waitForReplicas: { count: 1, timeoutMs: 10 } } : {},
        ),
      ),
    );
    expect(results.map((r) => r.ok || r.error.code)).toEqual([true, true, true, true, 'not_replicated', true]);
    const written = (await redis.xrange(stream.name, '-', '+')).map(([, fields]) => decodeEntryFields(fields));
    expect(written).toEqual(texts.map((text) => ({ ok: true, json: JSON.stringify({ text }) })));
  });

  it('publishes schema-less streams as given', async () => {
    const result = await createPublisher({ redis }).publish(notes, { text: 'hi' });
    expect(result.ok).toBe(true);
    expect(await redis.xlen('notes')).toBe(1);
  });

  it('refuses payloads that fail the stream schema, naming the field, and writes nothing', async () => {
    const publisher = createPublisher({ redis });
    // Simulates an untyped caller (JSON from elsewhere) getting past the compile-time check.
    const bad = JSON.parse('{"id":"o-2","qty":-1}') as { id: string; qty: number };
    const result = await publisher.publish(orders.for('us'), bad);
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'payload_invalid',
        retryable: false,
        field: 'payload.qty',
        message: expect.stringMatching(/^payload\.qty: /) as string,
      },
    });
    expect(await redis.exists('orders:us')).toBe(0);
  });

  it('refuses payloads that are not JSON-serializable', async () => {
    const result = await createPublisher({ redis }).publish(defineStream<bigint>('big'), 1n);
    expect(result).toMatchObject({ ok: false, error: { code: 'payload_invalid', retryable: false, field: 'payload' } });
  });

  it('trims the stream approximately to maxLen', async () => {
    const publisher = createPublisher({ redis, maxLen: 10 });
    const stream = notes.for('trim');
    for (let i = 0; i < 500; i += 1) {
      const result = await publisher.publish(stream, { text: String(i) });
      expect(result.ok).toBe(true);
    }
    const length = await redis.xlen(stream.name);
    // MAXLEN ~ trims whole radix-tree nodes (100 entries by default), never below the cap.
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(500);
  });

  it('reports a key of the wrong type as redis_rejected, not retryable', async () => {
    await redis.set('plain-key', 'x');
    const result = await createPublisher({ redis }).publish(defineStream<number>('plain-key'), 1);
    expect(result).toMatchObject({ ok: false, error: { code: 'redis_rejected', retryable: false } });
  });

  it('answers not_replicated, entry written, when fewer replicas than asked acknowledged (this server has none)', async () => {
    const publisher = createPublisher({ redis, waitForReplicas: { count: 1, timeoutMs: 20 } });
    const plain = await publisher.publish(notes.for('wait'), { text: 'a' });
    if (plain.ok || plain.error.code !== 'not_replicated') throw new Error(JSON.stringify(plain));
    expect(plain.error).toMatchObject({ retryable: true, written: 'unknown', replicas: 0, wanted: 1, duplicate: false });
    expect((await redis.xrange('notes:wait', plain.error.id, plain.error.id)).length).toBe(1);
    // The idempotent script is pipelined the same way, and falls back to EVAL once the server forgot it.
    await redis.script('FLUSH');
    const keyed = await publisher.publish(notes.for('wait'), { text: 'b' }, { idempotencyKey: 'w1' });
    const again = await publisher.publish(notes.for('wait'), { text: 'b' }, { idempotencyKey: 'w1' });
    if (keyed.ok || keyed.error.code !== 'not_replicated' || again.ok) throw new Error(JSON.stringify([keyed, again]));
    expect(again.error).toMatchObject({ code: 'not_replicated', duplicate: true, id: keyed.error.id });
    const skipped = await publisher.publish(notes.for('wait'), { text: 'c' }, { waitForReplicas: false });
    expect(skipped.ok).toBe(true);
    expect(await redis.xlen('notes:wait')).toBe(3);
  });

  it('answers not_replicated, not timeout, when connecting used part of the deadline before WAIT', async () => {
    // CLIENT PAUSE holds the new connection's handshake for 1 s of the 2 s deadline: a WAIT of the
    // full 1.5 s would outlast the 1 s left and end as timeout; capped, it ends as not_replicated.
    // A template of its own: publishers made from `redis` share one connection, already open.
    const template = server.client({ lazyConnect: true });
    const publisher = createPublisher({ redis: template, timeoutMs: 2_000, waitForReplicas: { count: 1, timeoutMs: 1_500 } });
    try {
      await redis.call('CLIENT', 'PAUSE', '1000', 'ALL');
      const result = await publisher.publish(notes.for('late'), { text: 'a' });
      expect(result).toMatchObject({ ok: false, error: { code: 'not_replicated', replicas: 0, wanted: 1 } });
    } finally {
      await publisher.close();
      template.disconnect();
    }
  });

  it('answers not_replicated, not timeout, when the script is not loaded on the node (a fresh or failed-over one)', async () => {
    // A NOSCRIPT reply would still run the pipelined WAIT for its whole 1.5 s, and a retry's WAIT
    // would come on top of it, past the 2 s deadline.
    await redis.call('SCRIPT', 'FLUSH');
    const publisher = createPublisher({ redis, timeoutMs: 2_000, waitForReplicas: { count: 1, timeoutMs: 1_500 } });
    const result = await publisher.publish(notes.for('unloaded'), { text: 'a' });
    expect(result).toMatchObject({ ok: false, error: { code: 'not_replicated', replicas: 0, wanted: 1 } });
  });

  it('reports an unreachable Redis as redis_unavailable, retryable, nothing sent', async () => {
    const down = await startRedis();
    const client = down.client({ lazyConnect: true, retryStrategy: () => null });
    await down.kill();
    const result = await createPublisher({ redis: client, timeoutMs: 2_000 }).publish(notes, { text: 'lost' });
    expect(result).toMatchObject({ ok: false, error: { code: 'redis_unavailable', retryable: true, written: 'no' } });
    await down.stop();
  });
});
