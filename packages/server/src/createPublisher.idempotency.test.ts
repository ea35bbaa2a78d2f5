import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStream } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';

const jobs = defineStream('jobs', z.object({ step: z.number() }));
const notes = defineStream<{ text: string }>('notes');

describe('createPublisher with idempotency keys (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = server.client();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('writes one entry per key and answers a repeat with the first entry id', async () => {
    const publisher = createPublisher({ redis });
    const stream = jobs.for('once');
    const first = await publisher.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
    const again = await publisher.publish(stream, { step: 1 }, { idempotencyKey: 'step-1' });
    const other = await publisher.publish(stream, { step: 2 }, { idempotencyKey: 'step-2' });
    if (!first.ok || !again.ok || !other.ok) throw new Error('publish failed');
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ ok: true, id: first.id, duplicate: true });
    expect(other.duplicate).toBe(false);
    expect((await redis.xrange(stream.name, '-', '+')).map(([id]) => id)).toEqual([first.id, other.id]);
  });

  it('keeps the same key apart on different streams', async () => {
    const publisher = createPublisher({ redis });
    const a = await publisher.publish(jobs.for('a'), { step: 1 }, { idempotencyKey: 'k' });
    const b = await publisher.publish(jobs.for('a:b'), { step: 1 }, { idempotencyKey: 'k' });
    expect([a.ok && a.duplicate, b.ok && b.duplicate]).toEqual([false, false]);
    expect(await redis.xlen('jobs:a')).toBe(1);
    expect(await redis.xlen('jobs:a:b')).toBe(1);
  });

  it('keeps concurrent repeats to one entry', async () => {
    const publisher = createPublisher({ redis });
    const stream = jobs.for('burst');
    const results = await Promise.all(Array.from({ length: 20 }, () => publisher.publish(stream, { step: 9 }, { idempotencyKey: 'same' })));
    const ids = new Set(results.map((r) => (r.ok ? r.id : r.error.code)));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
    expect(await redis.xlen(stream.name)).toBe(1);
  });

  it('remembers the key under the documented record key, for the documented window', async () => {
    const publisher = createPublisher({ redis, idempotencyWindowSeconds: 600 });
    const result = await publisher.publish(notes.for('rec'), { text: 'x' }, { idempotencyKey: 'order-17:filled' });
    if (!result.ok) throw new Error(result.error.message);
    const record = 'streamgate:idem:{notes:rec}notes:rec#order-17:filled';
    expect(await redis.get(record)).toBe(result.id);
    const ttl = await redis.pttl(record);
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const tagged = await publisher.publish(notes.for('{tenant7}', 'rec'), { text: 'x' }, { idempotencyKey: 'k1' });
    if (!tagged.ok) throw new Error(tagged.error.message);
    expect(await redis.get('streamgate:idem:{tenant7}notes:{tenant7}:rec#k1')).toBe(tagged.id);
  });

  it('writes again once the window has passed', async () => {
    const publisher = createPublisher({ redis, idempotencyWindowSeconds: 1 });
    const stream = notes.for('window');
    const first = await publisher.publish(stream, { text: 'a' }, { idempotencyKey: 'w' });
    if (!first.ok) throw new Error(first.error.message);
    await waitFor(async () => (await redis.exists(`streamgate:idem:{${stream.name}}${stream.name}#w`)) === 0, {
      timeoutMs: 5_000,
      message: 'the idempotency record expires after its 1 s window',
    });
    const second = await publisher.publish(stream, { text: 'a' }, { idempotencyKey: 'w' });
    expect(second).toMatchObject({ ok: true, duplicate: false });
    expect(await redis.xlen(stream.name)).toBe(2);
  });

  it('trims like a plain publish', async () => {
    const publisher = createPublisher({ redis, maxLen: 10 });
    const stream = notes.for('trim-idem');
    for (let i = 0; i < 500; i += 1) {
      const result = await publisher.publish(stream, { text: String(i) }, { idempotencyKey: `t-${i}` });
      expect(result.ok).toBe(true);
    }
    const length = await redis.xlen(stream.name);
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(500);
  });

  it('still works after the server forgot its scripts', async () => {
    const publisher = createPublisher({ redis });
    expect((await publisher.publish(notes.for('flush'), { text: 'a' }, { idempotencyKey: 'f1' })).ok).toBe(true);
    await redis.script('FLUSH');
    const result = await publisher.publish(notes.for('flush'), { text: 'b' }, { idempotencyKey: 'f2' });
    expect(result).toMatchObject({ ok: true, duplicate: false });
    expect(await redis.xlen('notes:flush')).toBe(2);
  });

  it.each([
    ['empty', '', /must not be empty/],
    ['over-long', 'k'.repeat(201), /201 characters long; at most 200/],
    ['with a space', 'a b', /" " at index 1/],
    ['not a string', 42, /must be a string/],
  ])('refuses an idempotency key that is %s, naming the field, and writes nothing', async (_what, key, reason) => {
    const stream = notes.for('bad-key');
    // An untyped caller (JSON from another service) can pass anything.
    const options = JSON.parse(JSON.stringify({ idempotencyKey: key })) as { idempotencyKey: string };
    const result = await createPublisher({ redis }).publish(stream, { text: 'x' }, options);
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'idempotency_key_invalid',
        retryable: false,
        field: 'idempotencyKey',
        message: expect.stringMatching(reason) as string,
      },
    });
    expect(await redis.exists(stream.name)).toBe(0);
  });

  it('refuses a payload that is not JSON with a key too, naming the field', async () => {
    const result = await createPublisher({ redis }).publish(defineStream<() => void>('fn'), () => undefined, { idempotencyKey: 'k' });
    expect(result).toMatchObject({ ok: false, error: { code: 'payload_invalid', retryable: false, field: 'payload' } });
    expect(await redis.exists('fn')).toBe(0);
  });

  it('refuses an idempotent publish to a stream that cannot share its slot with a record', async () => {
    const stream = defineStream<number>('odd}name');
    const result = await createPublisher({ redis }).publish(stream, 1, { idempotencyKey: 'k' });
    expect(result).toMatchObject({ ok: false, error: { code: 'stream_invalid', retryable: false, field: 'stream' } });
    expect(await redis.exists('odd}name')).toBe(0);
    // Without a key nothing needs a second key, so the stream takes plain publishes.
    expect((await createPublisher({ redis }).publish(stream, 1)).ok).toBe(true);
  });

  it('refuses a stream reference whose name is not a stream name', async () => {
    const forged: StreamRef<number> = { name: 'has space', schema: undefined };
    const result = await createPublisher({ redis }).publish(forged, 1);
    expect(result).toMatchObject({ ok: false, error: { code: 'stream_invalid', retryable: false, field: 'stream' } });
  });

  it('answers stream_invalid, never throws, for a stream that is no stream reference at all', async () => {
    const publisher = createPublisher({ redis });
    const notStreams: unknown[] = [undefined, null, 5, 'orders:x', {}];
    for (const stream of notStreams) {
      const result = await publisher.publish(stream as StreamRef<number>, 1);
      expect(result).toMatchObject({ ok: false, error: { code: 'stream_invalid', retryable: false, field: 'stream' } });
    }
  });

  it('names what is missing from the options, rather than failing to read it', () => {
    const make = (options: unknown) => () => createPublisher(options as Parameters<typeof createPublisher>[0]);
    expect(make(undefined)).toThrow(/createPublisher needs an options object/);
    expect(make({})).toThrow(/exactly one of redis .* and targets .*; got neither/);
    expect(make({ redis, targets: server.url })).toThrow(/got both/);
  });

  it('refuses a client with a keyPrefix at creation', () => {
    expect(() => createPublisher({ redis: server.client({ lazyConnect: true, keyPrefix: 'app:' }) })).toThrow(/keyPrefix/);
  });

  it('sends on one connection of its own per client, closed with the last publisher', async () => {
    const template = server.client({ connectionName: 'template-under-test', lazyConnect: true });
    const publishers = Array.from({ length: 3 }, () => createPublisher({ redis: template }));
    for (const publisher of publishers) expect((await publisher.publish(notes.for('own'), { text: 'x' })).ok).toBe(true);
    expect(template.status).toBe('wait');
    const named = async (): Promise<number> =>
      String(await redis.client('LIST'))
        .split('\n')
        .filter((line) => line.includes('name=template-under-test')).length;
    expect(await named()).toBe(1);
    const [first, ...rest] = publishers;
    await first?.close();
    expect(await first?.publish(notes.for('own'), { text: 'y' })).toMatchObject({ ok: false, error: { code: 'closed', retryable: false } });
    expect((await rest[0]?.publish(notes.for('own'), { text: 'z' }))?.ok).toBe(true);
    await Promise.all(rest.map((publisher) => publisher.close()));
    await waitFor(async () => (await named()) === 0, { timeoutMs: 5_000, message: 'the connection closes with its last publisher' });
    // A publisher made afterwards opens a fresh one.
    expect((await createPublisher({ redis: template }).publish(notes.for('own'), { text: 'w' })).ok).toBe(true);
    expect(await redis.xlen('notes:own')).toBe(5);
  });

  it('closes when the client it was made from ends', async () => {
    const template = server.client();
    const publisher = createPublisher({ redis: template });
    expect((await publisher.publish(notes.for('ends'), { text: 'x' })).ok).toBe(true);
    template.disconnect();
    await waitFor(() => template.status === 'end', { timeoutMs: 5_000, message: 'the template client ends' });
    expect(await publisher.publish(notes.for('ends'), { text: 'z' })).toMatchObject({ ok: false, error: { code: 'closed' } });
    expect(await redis.xlen('notes:ends')).toBe(1);
  });
});
