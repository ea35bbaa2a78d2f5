import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { NotifyReader } from './NotifyReader.js';
import { FakeNotifyRedis } from './testing/FakeNotifyRedis.js';
import { ManualClock } from '@streamgate/protocol/testing';

function reader() {
  const redis = new FakeNotifyRedis();
  const clock = new ManualClock();
  const got = new Map<StreamName, StreamId[]>();
  const errors: Error[] = [];
  const r = new NotifyReader({
    redis,
    clock,
    count: 1_000,
    sweepIntervalMs: 60_000,
    onEntries: (stream, entries) => got.set(stream, [...(got.get(stream) ?? []), ...entries.map((e) => e.id)]),
    onWrongType: () => Promise.resolve([]),
    onSuspect: () => undefined,
    onError: (error) => errors.push(error),
    onRead: () => undefined,
  });
  return { r, redis, clock, got, errors };
}

describe('NotifyReader, a node that does not answer', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('delivers the other keys at once, never isolates the unanswered ones, and reads them again from the same position once their node answers', async () => {
    // The retry's full-jitter draw is fixed mid-range: a draw under 5 ms would retry the
    // unanswered key inside the healthy node's wake-up below (about 5% of runs failed so).
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { r, redis, clock, got, errors } = reader();
    for (const key of ['ok1', 'ok2', 'gone']) r.watch(key, '0-0');
    await clock.advance(10);
    redis.unreachable.add('gone');
    redis.xadd('gone', '1-0');
    redis.xadd('ok1', '1-0');
    await clock.advance(5);
    expect(got.get('ok1')).toEqual(['1-0']);
    expect(got.get('gone')).toBeUndefined();
    expect(errors.map((e) => e.message)).toEqual(['node of gone did not answer']);
    expect(r.cursor('gone')).toBe('0-0');

    // The healthy node's next wake-up is one grouped read of its key alone: no per-key reads of
    // the unanswered key come first (that was for WRONGTYPE), and it waits for its backoff.
    const before = redis.readsSent.length;
    redis.xadd('ok2', '1-0');
    await clock.advance(5);
    expect(redis.readKinds.slice(before)).toEqual(['grouped']);
    expect(redis.readsSent.slice(before)).toEqual([[['ok2', '0-0']]]);
    expect(got.get('ok2')).toEqual(['1-0']);

    // Retried after a bounded backoff, with its wake-up kept; still unanswered, retried again.
    await clock.advance(1_100);
    expect(redis.readsSent.slice(before + 1).flat()).toContainEqual(['gone', '0-0']);
    redis.unreachable.delete('gone');
    await clock.advance(1_100);
    expect(got.get('gone')).toEqual(['1-0']);
    expect(r.cursor('gone')).toBe('1-0');
    expect(redis.readKinds.every((kind) => kind === 'grouped')).toBe(true);
    await r.close();
  });
});
