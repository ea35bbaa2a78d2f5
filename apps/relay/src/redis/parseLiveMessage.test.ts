import { describe, expect, it } from 'vitest';
import { parseLiveMessage } from './parseLiveMessage.js';
import { DATA_NOT_UTF8 } from './parseReplies.js';

describe('parseLiveMessage', () => {
  it('reads the two ids and the value verbatim, spaces and newlines included', () => {
    expect(parseLiveMessage(Buffer.from('0-0 1700000000000-0 {"a": "b c"}\n'))).toEqual({
      prev: '0-0',
      entry: { id: '1700000000000-0', fields: ['data', '{"a": "b c"}\n'] },
    });
    expect(parseLiveMessage(Buffer.from('5-1 5-2 '))).toEqual({ prev: '5-1', entry: { id: '5-2', fields: ['data', ''] } });
  });

  it('orders the ids as integers, milliseconds first', () => {
    for (const [prev, id] of [
      ['1-9', '1-10'],
      ['9-5', '10-0'],
      ['0-0', '0-1'],
      ['99-99', '100-0'],
      ['5-3', '5-4'],
    ]) {
      expect(parseLiveMessage(Buffer.from(`${prev} ${id} x`))?.prev, `${prev} < ${id}`).toBe(prev);
      expect(parseLiveMessage(Buffer.from(`${id} ${prev} x`)), `${id} > ${prev}`).toBeNull();
    }
  });

  it('takes ids with parts of twenty digits up to 2^64-1', () => {
    const max = '18446744073709551615';
    expect(parseLiveMessage(Buffer.from(`1-0 ${max}-${max} x`))?.entry.id).toBe(`${max}-${max}`);
    expect(parseLiveMessage(Buffer.from(`0-0 10000000000000000000-0 x`))?.prev).toBe('0-0');
  });

  it('marks a value that is not UTF-8 malformed, as a read of the entry would', () => {
    const payload = Buffer.concat([Buffer.from('1-0 2-0 '), Buffer.from([0xff, 0xfe])]);
    expect(parseLiveMessage(payload)?.entry.malformed).toBe(DATA_NOT_UTF8);
  });

  it('refuses what is not two ids, or a prev id not below the id', () => {
    const tooBig = '18446744073709551616-0';
    const bad = ['', '1-0', '1-0 2-0', 'x 2-0 {}', '1-0 y {}', '2-0 2-0 {}', '3-0 2-0 {}', '01-0 2-0 {}', '1-01 2-0 {}'];
    bad.push('1--0 2-0 {}', '-1 2-0 {}', '1- 2-0 {}', '1-0-0 2-0 {}', '1-0 2-0x {}', `1-0 ${tooBig} {}`, '1-0 123456789012345678901-0 {}');
    for (const text of bad) {
      expect(parseLiveMessage(Buffer.from(text)), text).toBeNull();
    }
  });
});
