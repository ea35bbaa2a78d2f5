import { describe, expect, it } from 'vitest';
import type { StreamEntry } from '../core/StreamSource.js';
import { MemoryStreamSource } from './MemoryStreamSource.js';

// The in-memory source stands in for Redis in the relay's unit tests, so it is held to what
// RedisStreamSource answers against a real server.
describe('MemoryStreamSource', () => {
  it('assigns increasing <ms>-<seq> ids and refuses an explicit id at or below the top', () => {
    let now = 1_000;
    const source = new MemoryStreamSource(null, () => now);
    expect(source.appendData('s', 1)).toBe('1000-0');
    expect(source.appendData('s', 2)).toBe('1000-1');
    now = 900; // the clock stepped back: Redis keeps the last ms
    expect(source.appendData('s', 3)).toBe('1000-2');
    now = 2_000;
    expect(source.appendData('s', 4)).toBe('2000-0');
    expect(() => source.appendData('s', 5, '2000-0')).toThrow(/equal or smaller/);
    expect(source.appendData('s', 5, '3000-7')).toBe('3000-7');
  });

  it('answers range and inspect like XRANGE and XINFO, metadata surviving trims and deletions', async () => {
    let now = 1;
    const source = new MemoryStreamSource(null, () => now++);
    const ids = [1, 2, 3, 4, 5].map((v) => source.appendData('s', v));
    source.trim('s', 3);
    source.deleteEntry('s', ids[3] ?? '');
    const page = await source.range('s', ids[2] ?? '', 10);
    expect(page).toEqual({
      ok: true,
      value: {
        entries: [{ id: ids[4], fields: ['data', '5'] }],
        info: { lastGeneratedId: ids[4], firstEntryId: ids[2], length: 2, entriesAdded: 5, maxDeletedEntryId: ids[3] },
        afterExists: true,
      },
    });
    expect(await source.inspect('s', ids[0])).toMatchObject({ ok: true, value: { probeExists: false } });
    expect(await source.inspect('missing', '1-0')).toEqual({ ok: true, value: { info: null, probeExists: false } });
    expect(await source.range('missing', '0-0', 5)).toEqual({ ok: true, value: { entries: [], info: null, afterExists: false } });
    source.setWrongType('s');
    expect(await source.range('s', '0-0', 5)).toMatchObject({ ok: false, error: { code: 'source_wrong_type', retryable: false } });
  });

  it('delivers watched entries after the cursor in order, each once, pausing while unhealthy', async () => {
    const got: Array<[string, string]> = [];
    const failed: string[] = [];
    const source = new MemoryStreamSource({
      entries: (stream, entries: readonly StreamEntry[]) => got.push(...entries.map((e): [string, string] => [stream, e.id])),
      failed: (stream) => failed.push(stream),
      reset: (stream) => got.push([stream, 'reset']),
    });
    const first = source.append('a', ['data', '1'], '1-0');
    source.watch('a', first);
    source.append('a', ['data', '2'], '2-0');
    source.append('b', ['data', '1'], '1-0');
    await source.settled();
    expect(got).toEqual([['a', '2-0']]);
    source.setHealthy(false);
    source.append('a', ['data', '3'], '3-0');
    await source.settled();
    expect(got).toHaveLength(1);
    expect(await source.inspect('a')).toMatchObject({ ok: false, error: { code: 'source_unavailable', retryable: true } });
    source.setHealthy(true);
    await source.settled();
    expect(got).toEqual([
      ['a', '2-0'],
      ['a', '3-0'],
    ]);
    source.failNextRead();
    expect(await source.range('a', '0-0', 1)).toMatchObject({ ok: false });
    expect(await source.range('a', '0-0', 1)).toMatchObject({ ok: true });
    source.setWrongType('a');
    await source.settled();
    expect(failed).toEqual(['a']);
    expect(source.isWatched('a')).toBe(false);
    source.deleteKey('a');
    expect(source.append('a', ['data', 'x'], '1-0')).toBe('1-0');
  });

  it('reports a deleted and recreated key with reset, then every entry of the new incarnation', async () => {
    const got: string[] = [];
    const source = new MemoryStreamSource({
      entries: (_stream, entries) => got.push(...entries.map((e) => e.id)),
      failed: () => undefined,
      reset: (stream) => got.push(`reset ${stream}`),
    });
    source.append('r', ['data', '1'], '5-0');
    source.watch('r', '5-0');
    source.deleteKey('r');
    await source.settled();
    expect(got).toEqual([]);
    source.append('r', ['data', '1'], '1-1');
    source.append('r', ['data', '2'], '1-2');
    await source.settled();
    source.append('r', ['data', '3'], '1-3');
    await source.settled();
    expect(got).toEqual(['reset r', '1-1', '1-2', '1-3']);
    // A key that did not exist when watched is a first incarnation, not a reset.
    source.watch('fresh', '0-0');
    source.append('fresh', ['data', '1'], '1-0');
    await source.settled();
    expect(got.at(-1)).toBe('1-0');
    expect(got.filter((g) => g.startsWith('reset'))).toEqual(['reset r']);
  });
});
