import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { NotifyReader } from './NotifyReader.js';
import type { NotifyReaderOptions } from './NotifyReader.js';
import { FakeNotifyRedis } from './testing/FakeNotifyRedis.js';
import { ManualClock } from '@streamgate/protocol/testing';

function reader(given: Partial<NotifyReaderOptions> & { redis?: FakeNotifyRedis; count?: number } = {}) {
  const redis = given.redis ?? new FakeNotifyRedis(given.count ?? 1_000);
  const clock = new ManualClock();
  const got = new Map<StreamName, StreamId[]>();
  const suspects: StreamName[] = [];
  const r = new NotifyReader({
    redis,
    clock,
    count: 1_000,
    sweepIntervalMs: 5_000,
    onEntries: (stream, entries) => got.set(stream, [...(got.get(stream) ?? []), ...entries.map((e) => e.id)]),
    onWrongType: () => Promise.resolve([]),
    onSuspect: (stream) => suspects.push(stream),
    onError: (error) => {
      throw error;
    },
    onRead: () => undefined,
    ...given,
  });
  return { r, redis, clock, got, suspects };
}

describe('NotifyReader', () => {
  it('reads only the woken keys, coalescing wake-ups into one grouped read', async () => {
    const { r, redis, clock, got } = reader();
    for (let i = 0; i < 100; i++) r.watch(`k${i}`, '0-0');
    await clock.advance(10);
    const before = redis.readsSent.length;
    redis.xadd('k3', '1-0');
    redis.xadd('k7', '1-0');
    redis.xadd('k3', '2-0');
    await clock.advance(5);
    expect(redis.readsSent.slice(before)).toEqual([
      [
        ['k3', '0-0'],
        ['k7', '0-0'],
      ],
    ]);
    expect(redis.readKinds.slice(before)).toEqual(['grouped']);
    expect(got.get('k3')).toEqual(['1-0', '2-0']);
    expect(got.get('k7')).toEqual(['1-0']);
    expect(r.cursor('k3')).toBe('2-0');
    await r.close();
  });

  it('reads the keys of a failed grouped read one command each: only the key of another type is dropped', async () => {
    const wrong: StreamName[][] = [];
    const errors: Error[] = [];
    const { r, redis, clock, got } = reader({
      onWrongType: (keys) => {
        wrong.push([...keys]);
        return Promise.resolve(keys);
      },
      onError: (error) => errors.push(error),
    });
    for (const key of ['a', 'b', 'c']) r.watch(key, '0-0');
    await clock.advance(10);
    redis.setWrongType('b');
    redis.xadd('a', '1-0');
    redis.xadd('c', '1-0');
    redis.publish('b', 'xadd');
    await clock.advance(10);
    expect(wrong).toEqual([['b']]);
    expect(got.get('a')).toEqual(['1-0']);
    expect(got.get('c')).toEqual(['1-0']);
    expect(r.cursor('b')).toBeUndefined();
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/^WRONGTYPE/)]);
    // The grouped read failed whole; its keys were then read a command each.
    expect(redis.readKinds.slice(-2)).toEqual(['grouped', 'perKey']);
    redis.xadd('a', '2-0');
    await clock.advance(10);
    expect(redis.readKinds.at(-1)).toBe('grouped');
    expect(got.get('a')).toEqual(['1-0', '2-0']);
    await r.close();
  });

  it('reads a key after its SUBSCRIBE is confirmed, so an entry written before the channel existed is not missed', async () => {
    const redis = new FakeNotifyRedis();
    redis.autoConfirm = false;
    const { r, clock, got } = reader({ redis });
    r.watch('early', '0-0');
    redis.xadd('early', '1-0');
    await clock.advance(10);
    expect(got.get('early')).toBeUndefined();
    redis.confirm();
    await clock.advance(10);
    expect(got.get('early')).toEqual(['1-0']);
    await r.close();
  });

  it('subscribes a storm of keys in bounded batches, a bounded number in flight', async () => {
    const redis = new FakeNotifyRedis();
    redis.autoConfirm = false;
    const { r, clock } = reader({ redis, subscribeBatchSize: 500, maxSubscribesInFlight: 2 });
    for (let i = 0; i < 10_000; i++) r.watch(`s${i}`, '0-0');
    expect(redis.unconfirmed).toBe(2);
    while (redis.unconfirmed > 0) {
      redis.confirm();
      await clock.advance(0);
    }
    expect(redis.channelCount).toBe(10_000);
    expect(Math.max(...redis.subscribeBatches)).toBe(500);
    expect(redis.subscribeBatches.reduce((a, b) => a + b, 0)).toBe(10_000);
    await r.close();
  });

  it('follows the watched set: unwatch unsubscribes, a key watched again while its UNSUBSCRIBE is out ends subscribed and read', async () => {
    const redis = new FakeNotifyRedis();
    const { r, clock, got } = reader({ redis });
    r.watch('a', '0-0');
    r.watch('b', '0-0');
    await clock.advance(10);
    expect(redis.channelCount).toBe(2);
    redis.autoConfirm = false;
    r.unwatch('a');
    r.watch('a', '0-0');
    redis.xadd('a', '1-0', { notify: false });
    redis.confirm();
    await clock.advance(10);
    redis.autoConfirm = true;
    while (redis.unconfirmed > 0) redis.confirm();
    await clock.advance(10);
    expect(redis.hasChannel('a')).toBe(true);
    expect(got.get('a')).toEqual(['1-0']);
    r.unwatch('b');
    await clock.advance(10);
    expect(redis.hasChannel('b')).toBe(false);
    expect(r.channelCount).toBe(1);
    await r.close();
  });

  it('re-reads a key that returned a full page until it is drained', async () => {
    const { r, redis, clock, got } = reader({ count: 2, redis: new FakeNotifyRedis(2) });
    r.watch('full', '0-0');
    await clock.advance(10);
    for (let i = 1; i <= 5; i++) redis.xadd('full', `${i}-0`, { notify: i === 5 });
    await clock.advance(20);
    expect(got.get('full')).toEqual(['1-0', '2-0', '3-0', '4-0', '5-0']);
    await r.close();
  });

  it('delivers an entry whose notification was lost within one sweep interval', async () => {
    const { r, redis, clock, got } = reader();
    r.watch('quiet', '0-0');
    await clock.advance(10);
    redis.xadd('quiet', '1-0', { notify: false });
    await clock.advance(4_000);
    expect(got.get('quiet')).toBeUndefined();
    await clock.advance(1_100);
    expect(got.get('quiet')).toEqual(['1-0']);
    await r.close();
  });

  it('after a dropped pub/sub connection subscribes every watched key again and reads each from its cursor', async () => {
    const { r, redis, clock, got } = reader();
    r.watch('x', '0-0');
    r.watch('y', '0-0');
    await clock.advance(10);
    redis.dropSubscriber();
    redis.xadd('x', '1-0');
    redis.xadd('y', '1-0');
    await clock.advance(10);
    expect(got.size).toBe(0);
    redis.reconnectSubscriber();
    await clock.advance(10);
    expect(redis.channelCount).toBe(2);
    expect(got.get('x')).toEqual(['1-0']);
    expect(got.get('y')).toEqual(['1-0']);
    await r.close();
  });

  it('hands a del, or a wake-up that reads nothing, to the incarnation check at once', async () => {
    const { r, redis, clock, suspects } = reader();
    r.watch('gone', '5-0');
    await clock.advance(10);
    redis.publish('gone', 'xtrim');
    redis.publish('gone', 'del');
    expect(suspects).toEqual(['gone']);
    redis.xadd('gone', '1-0');
    await clock.advance(10);
    expect(suspects).toEqual(['gone', 'gone']);
    await r.close();
  });

  it('delivers nothing once closed, and its positions start the next reader exactly where it stopped', async () => {
    const { r, redis, clock, got } = reader();
    r.watch('m', '0-0');
    await clock.advance(10);
    redis.xadd('m', '1-0');
    await clock.advance(10);
    redis.xadd('m', '2-0');
    const positions = r.positions();
    await r.close();
    await clock.advance(10);
    expect(got.get('m')).toEqual(['1-0']);
    expect(positions).toEqual([['m', '1-0']]);
    const next = reader();
    next.redis.xadd('m', '1-0');
    next.redis.xadd('m', '2-0');
    const successor = new NotifyReader(
      {
        redis: next.redis,
        clock: next.clock,
        count: 1_000,
        sweepIntervalMs: 5_000,
        onEntries: (_, entries) => got.set('m', [...(got.get('m') ?? []), ...entries.map((e) => e.id)]),
        onWrongType: () => Promise.resolve([]),
        onSuspect: () => undefined,
        onError: () => undefined,
        onRead: () => undefined,
      },
      positions,
    );
    await next.clock.advance(10);
    expect(got.get('m')).toEqual(['1-0', '2-0']);
    await successor.close();
    await next.r.close();
  });
});
