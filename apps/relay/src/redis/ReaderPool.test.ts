import { describe, expect, it } from 'vitest';
import { ReaderPool } from './ReaderPool.js';
import { RedisBatchReader } from './RedisBatchReader.js';
import { FakeReaderRedis } from './testing/FakeReaderRedis.js';
import { ManualClock, settle } from '@streamgate/protocol/testing';

describe('ReaderPool', () => {
  it('reads 2,500 streams with three blocking reads of at most 1,000 keys, and refills a reader that lost streams', async () => {
    const clock = new ManualClock();
    const fakes: FakeReaderRedis[] = [];
    const pool = new ReaderPool(1_000, () => {
      const redis = new FakeReaderRedis();
      fakes.push(redis);
      return new RedisBatchReader({
        redis,
        clock,
        onEntries: () => undefined,
        onWrongType: () => Promise.resolve([]),
        onError: () => undefined,
        onRead: () => undefined,
      });
    });
    for (let i = 0; i < 2_500; i++) pool.watch(`s${i}`, '0-0');
    pool.watch('s0', '9-9'); // already watched: no second place, no new cursor
    await settle();
    expect(pool.readerCount).toBe(3);
    expect(fakes.map((f) => f.reads.at(-1)?.keys.length)).toEqual([1_000, 1_000, 500]);
    expect(fakes[0]?.reads.at(-1)?.ids[0]).toBe('0-0');
    pool.unwatch('s10');
    pool.watch('joiner', '0-0');
    await settle();
    expect(pool.readerCount).toBe(3);
    expect(pool.reader('joiner')).toBe(pool.reader('s0'));
    expect(fakes[0]?.reads.at(-1)?.keys).toContain('joiner');
    expect(fakes[0]?.reads.at(-1)?.keys).not.toContain('s10');
    expect([...pool.streams()]).toHaveLength(2_500);
    await pool.close();
  });
});
