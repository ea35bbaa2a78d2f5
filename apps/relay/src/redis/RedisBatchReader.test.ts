import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { RedisBatchReader, coalesceDelayMs } from './RedisBatchReader.js';
import { FakeReaderRedis, FakeReplyError } from './testing/FakeReaderRedis.js';
import { ManualClock, settle } from '@streamgate/protocol/testing';

function harness(options: { wrongType?: (keys: readonly StreamName[]) => readonly StreamName[] } = {}) {
  const redis = new FakeReaderRedis();
  const clock = new ManualClock();
  const got: Array<[StreamName, StreamId[]]> = [];
  const errors: string[] = [];
  const wrongTypeAsked: Array<readonly StreamName[]> = [];
  const reader = new RedisBatchReader({
    redis,
    clock,
    onEntries: (stream, entries) => got.push([stream, entries.map((e) => e.id)]),
    onWrongType: (keys) => {
      wrongTypeAsked.push(keys);
      return Promise.resolve(options.wrongType?.(keys) ?? []);
    },
    onError: (error) => errors.push(error.message),
    onRead: () => undefined,
  });
  return { redis, clock, reader, got, errors, wrongTypeAsked };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RedisBatchReader scheduling', () => {
  it('sleeps without a read while it watches nothing, and reads from each stream’s last delivered id', async () => {
    const { redis, clock, reader, got } = harness();
    await settle();
    expect(redis.reads).toHaveLength(0);
    redis.xadd('a', '1-1');
    reader.add('a', '0-0');
    await settle();
    expect(got).toEqual([['a', ['1-1']]]);
    await clock.advance(1);
    expect(redis.reads.map((r) => r.ids)).toEqual([['0-0'], ['1-1']]);
    expect(redis.blocked).toBe(true);
    await reader.close();
  });

  it('wakes the blocked read when a stream joins, and the next read names the new stream', async () => {
    const { redis, reader } = harness();
    reader.add('a', '0-0');
    await settle();
    expect(redis.blocked).toBe(true);
    reader.add('b', '5-0');
    await settle();
    expect(redis.unblockCalls).toBe(1);
    expect(redis.reads.map((r) => [r.keys, r.ids])).toEqual([
      [['a'], ['0-0']],
      [
        ['a', 'b'],
        ['0-0', '5-0'],
      ],
    ]);
    // A burst of joins while one unblock is out restarts the read once more, not once per join.
    reader.add('c', '0-0');
    reader.add('d', '0-0');
    await settle();
    expect(redis.unblockCalls).toBe(2);
    expect(redis.reads.at(-1)?.keys).toEqual(['a', 'b', 'c', 'd']);
    await reader.close();
  });

  it('retries CLIENT UNBLOCK every 2 ms while the read is sent but not yet blocked', async () => {
    const { redis, clock, reader } = harness();
    reader.add('a', '0-0');
    await settle();
    redis.missUnblocks(2);
    reader.add('b', '0-0');
    await settle();
    expect(redis.unblockCalls).toBe(1);
    await clock.advance(2);
    expect(redis.unblockCalls).toBe(2);
    expect(redis.reads).toHaveLength(1);
    await clock.advance(2);
    expect(redis.unblockCalls).toBe(3);
    expect(redis.reads.at(-1)?.keys).toEqual(['a', 'b']);
    await reader.close();
  });

  it('waits the coalescing window after a read that returned entries (longer for wider reads), and re-reads at once after an empty one', async () => {
    const { redis, clock, reader } = harness();
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}`);
    for (const k of keys) reader.add(k, '0-0');
    await settle();
    expect(redis.reads).toHaveLength(1);
    expect(coalesceDelayMs(1_000)).toBe(2);
    redis.xadd('k7', '1-0');
    await settle();
    expect(redis.reads).toHaveLength(1);
    await clock.advance(1);
    expect(redis.reads).toHaveLength(1);
    await clock.advance(1);
    expect(redis.reads).toHaveLength(2);
    // An empty read (the block timed out or was unblocked) is not followed by a wait.
    reader.add('late', '0-0');
    await settle();
    expect(redis.reads).toHaveLength(3);
    expect(clock.pending).toBe(0);
    await reader.close();
  });

  it('backs off after failed reads, growing with each failure, and starts over after a success', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const { redis, clock, reader, errors } = harness();
    redis.failNextRead(new Error('connection reset'));
    redis.failNextRead(new Error('connection reset'));
    reader.add('a', '0-0');
    await settle();
    expect(errors).toEqual(['connection reset']);
    await clock.advance(98); // first failure: up to 100 ms
    expect(redis.reads).toHaveLength(1);
    await clock.advance(1);
    expect(redis.reads).toHaveLength(2);
    await clock.advance(197); // second failure: up to 200 ms
    expect(redis.reads).toHaveLength(2);
    await clock.advance(1);
    expect(redis.reads).toHaveLength(3);
    expect(redis.blocked).toBe(true);
    redis.xadd('a', '1-0');
    await clock.advance(1);
    redis.failNextRead(new Error('connection reset'));
    reader.add('b', '0-0');
    await settle();
    await clock.advance(98); // the success reset the count: up to 100 ms again
    const before = redis.reads.length;
    await clock.advance(1);
    expect(redis.reads.length).toBe(before + 1);
    await reader.close();
  });

  it('drops the keys a WRONGTYPE read names as bad and re-reads the others at once; backs off when none is found', async () => {
    // The backoff is full jitter: a draw of 0 or 1 ms would end it within the 1 ms the test advances.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { redis, clock, reader, got, wrongTypeAsked } = harness({ wrongType: (keys) => keys.filter((k) => k === 'bad') });
    redis.failNextRead(new FakeReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'));
    reader.add('good', '0-0');
    reader.add('bad', '0-0');
    await settle();
    expect(wrongTypeAsked).toEqual([['good', 'bad']]);
    expect(redis.reads.map((r) => r.keys)).toEqual([['good', 'bad'], ['good']]);
    expect(reader.size).toBe(1);
    redis.xadd('good', '1-0');
    await settle();
    expect(got).toEqual([['good', ['1-0']]]);
    // A WRONGTYPE nobody can place (the key was fixed meanwhile) is an ordinary failure.
    redis.failNextRead(new FakeReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'));
    await clock.advance(1);
    expect(wrongTypeAsked).toHaveLength(2);
    expect(clock.pending).toBe(1);
    await reader.close();
  });

  it('leaves an unwatched stream out of the next read without waking the blocked one, and drops its entries already in flight', async () => {
    const { redis, clock, reader, got } = harness();
    reader.add('a', '0-0');
    reader.add('b', '0-0');
    await settle();
    reader.remove('b');
    await settle();
    expect(redis.unblockCalls).toBe(0);
    // The blocked read still names b; what it returns for b is no longer anyone's.
    redis.xadd('b', '1-0');
    await clock.advance(1);
    expect(got).toEqual([]);
    expect(redis.reads.at(-1)?.keys).toEqual(['a']);
    await reader.close();
  });

  it('abandons a read lost with its connection and learns the new CLIENT ID before the next one', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { redis, clock, reader, errors } = harness();
    reader.add('a', '0-0');
    await settle();
    redis.dropConnection();
    await clock.advance(0);
    expect(errors).toEqual(['reader connection closed during XREAD']);
    expect(redis.reads).toHaveLength(2);
    // Waking the new read works: it is unblocked with the new connection's id.
    reader.add('b', '0-0');
    await settle();
    expect(redis.reads.at(-1)?.keys).toEqual(['a', 'b']);
    await reader.close();
  });

  it('restarts a stream at its start at once, dropping what a read sent from the old position returns for it', async () => {
    const { redis, clock, reader, got } = harness();
    // The new incarnation's first entries are below the old position: a read from there misses them.
    redis.xadd('a', '1-1');
    redis.xadd('a', '1-2');
    reader.add('a', '2-0');
    await settle();
    expect(redis.blocked).toBe(true);
    redis.missUnblocks(1);
    expect(reader.restart('a')).toBe(true);
    expect(reader.restart('nobody')).toBe(false);
    expect(reader.cursor('a')).toBe('0-0');
    // Before the wake lands, the old read returns an entry of the new incarnation: not delivered from there.
    redis.xadd('a', '3-0');
    await clock.advance(2);
    expect(redis.reads.map((r) => r.ids)).toEqual([['2-0'], ['0-0'], ['3-0']]);
    expect(got).toEqual([['a', ['1-1', '1-2', '3-0']]]);
    await reader.close();
  });
});
