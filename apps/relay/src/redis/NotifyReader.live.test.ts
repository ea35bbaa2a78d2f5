import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { NotifyReader } from './NotifyReader.js';
import { FakeNotifyRedis } from './testing/FakeNotifyRedis.js';
import { ManualClock } from '@streamgate/protocol/testing';

function reader(vanished: ReadonlySet<StreamName> = new Set()) {
  const redis = new FakeNotifyRedis();
  const clock = new ManualClock();
  const got = new Map<StreamName, StreamId[]>();
  const suspects: StreamName[] = [];
  const errors: Error[] = [];
  const r = new NotifyReader({
    redis,
    clock,
    count: 1_000,
    sweepIntervalMs: 5_000,
    onEntries: (stream, entries) => got.set(stream, [...(got.get(stream) ?? []), ...entries.map((e) => e.id)]),
    onWrongType: () => Promise.resolve([]),
    onSuspect: (stream) => suspects.push(stream),
    onError: (error) => errors.push(error),
    onRead: () => undefined,
    vanished: (stream) => vanished.has(stream),
  });
  return { r, redis, clock, got, suspects, errors };
}

/** Watches the keys and lets their first read (once subscribed) happen. */
async function watched(keys: readonly StreamName[], vanished?: ReadonlySet<StreamName>) {
  const parts = reader(vanished);
  for (const key of keys) parts.r.watch(key, '0-0');
  await parts.clock.advance(10);
  return { ...parts, readsBefore: parts.redis.readsSent.length };
}

describe('NotifyReader live messages', () => {
  it('delivers a published entry that follows the cursor with no read, the xadd event paired with its message', async () => {
    const { r, redis, clock, got, suspects, readsBefore } = await watched(['a', 'b']);
    redis.scriptWrite('a', '1-0');
    redis.scriptWrite('a', '2-0');
    redis.scriptWrite('b', '5-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0', '2-0']);
    expect(got.get('b')).toEqual(['5-0']);
    expect(redis.readsSent.length).toBe(readsBefore);
    expect(suspects).toEqual([]);
    expect(r.cursor('a')).toBe('2-0');
    await r.close();
  });

  it('reads the key from its cursor when a message was lost: the unanswered xadd wakes a read', async () => {
    const { r, redis, clock, got, readsBefore } = await watched(['a']);
    redis.scriptWrite('a', '1-0', { publish: false });
    redis.scriptWrite('a', '2-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0', '2-0']);
    expect(redis.readsSent.slice(readsBefore)).toEqual([[['a', '0-0']]]);
    await r.close();
  });

  it('reads the gap when a foreign XADD lands between two published writes', async () => {
    const { r, redis, clock, got, readsBefore } = await watched(['a']);
    redis.scriptWrite('a', '1-0');
    await clock.advance(10);
    redis.xadd('a', '2-0');
    redis.scriptWrite('a', '3-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0', '2-0', '3-0']);
    expect(redis.readsSent.slice(readsBefore)).toEqual([[['a', '1-0']]]);
    await r.close();
  });

  it('delivers nothing on a message no write came before: it reads the stream instead', async () => {
    const { r, redis, clock, got, suspects, readsBefore } = await watched(['a']);
    redis.scriptWrite('a', '1-0');
    await clock.advance(10);
    redis.publishOnly('a', '9-0', '1-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0']);
    expect(r.cursor('a')).toBe('1-0');
    expect(redis.readsSent.slice(readsBefore)).toEqual([[['a', '1-0']]]);
    expect(suspects).toEqual([]);
    redis.scriptWrite('a', '2-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0', '2-0']);
    await r.close();
  });

  it('reads a key whose message does not parse, and says so', async () => {
    const { r, redis, clock, got, errors } = await watched(['a']);
    redis.xadd('a', '1-0');
    redis.garbledLive('a');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0']);
    expect(errors.map((e) => e.message)).toEqual(['live message on a does not parse: read from the stream instead']);
    await r.close();
  });

  it('looks at the incarnation of a key whose message is at or below its cursor (recreated with lower ids)', async () => {
    const { r, redis, clock, got, suspects } = await watched(['a']);
    redis.scriptWrite('a', '5-0');
    await clock.advance(10);
    redis.scriptWrite('a', '2-0', { prev: '0-0' });
    await clock.advance(10);
    expect(got.get('a')).toEqual(['5-0']);
    expect(suspects).toEqual(['a']);
    await r.close();
  });

  it('looks at the incarnation of a key whose message follows an entry below its cursor (recreated with higher ids), and reads it', async () => {
    const { r, redis, clock, got, suspects } = await watched(['a', 'b']);
    redis.scriptWrite('a', '5-0');
    redis.scriptWrite('b', '5-0');
    await clock.advance(10);
    // A's first write into a new key (0-0 before it); b's previous entry, 4-0, is below 5-0.
    redis.scriptWrite('a', '9-0', { prev: '0-0' });
    redis.scriptWrite('b', '9-0', { prev: '4-0' });
    await clock.advance(10);
    expect(suspects).toEqual(['a', 'b']);
    // Read from the cursor all the same: the look decides, the entry is not held back.
    expect(got.get('a')).toEqual(['5-0', '9-0']);
    expect(got.get('b')).toEqual(['5-0', '9-0']);
    // A message whose previous id is above the cursor is a gap only: no look.
    redis.scriptWrite('a', '12-0', { prev: '11-0' });
    await clock.advance(10);
    expect(suspects).toEqual(['a', 'b']);
    await r.close();
  });

  it('reads nothing of a key seen missing from its old cursor: a write to it asks for the look that starts it over', async () => {
    const vanished = new Set<StreamName>();
    const { r, redis, clock, got, suspects } = await watched(['a', 'b'], vanished);
    redis.scriptWrite('a', '5-0');
    redis.scriptWrite('b', '5-0');
    await clock.advance(10);
    // Both keys were deleted and a look found them missing; their new incarnations' `*` ids are
    // above the old cursors, so a read from there would hand them over before their reset.
    redis.del('a');
    redis.del('b');
    await clock.advance(10);
    vanished.add('a').add('b');
    const readsBefore = redis.readsSent.length;
    suspects.length = 0;
    redis.scriptWrite('a', '9-0', { prev: '0-0' });
    redis.xadd('b', '9-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['5-0']);
    expect(got.get('b')).toEqual(['5-0']);
    expect(redis.readsSent.length).toBe(readsBefore);
    // Its xadd event and its message both ask; looks asked for meanwhile share one.
    expect([...new Set(suspects)]).toEqual(['a', 'b']);
    // The look found them back: the tracker restarts them, and they are read from their start.
    vanished.clear();
    r.restart('a');
    r.restart('b');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['5-0', '9-0']);
    expect(got.get('b')).toEqual(['5-0', '9-0']);
    await r.close();
  });

  it('neither loses nor repeats an entry when a message moves the cursor while a read of the key is out', async () => {
    const { r, redis, clock, got } = await watched(['a']);
    redis.xadd('a', '1-0');
    // The read of 1-0 goes out after the coalescing pause; the published 2-0 arrives before its reply.
    const read = clock.advance(1);
    redis.scriptWrite('a', '2-0', { prev: '1-0' });
    await read;
    redis.xadd('a', '3-0');
    await clock.advance(10);
    expect(got.get('a')).toEqual(['1-0', '2-0', '3-0']);
    await r.close();
  });
});
