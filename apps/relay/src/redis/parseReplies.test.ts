import { describe, expect, it } from 'vitest';
import { DATA_NOT_UTF8, ReplyShapeError, parseEntries, parseXread } from './parseReplies.js';

const entry = (id: string) => [id, ['data', '{"n":1}']];

describe('parseXread', () => {
  it('parses entries of several streams with their fields', () => {
    const parsed = parseXread([
      ['a', [entry('1700000000000-0'), entry('1700000000000-1')]],
      ['b', [entry('5-18446744073709551615')]],
    ]);
    expect(parsed).toEqual([
      [
        'a',
        [
          { id: '1700000000000-0', fields: ['data', '{"n":1}'] },
          { id: '1700000000000-1', fields: ['data', '{"n":1}'] },
        ],
      ],
      ['b', [{ id: '5-18446744073709551615', fields: ['data', '{"n":1}'] }]],
    ]);
  });

  it('returns nothing on a timed-out read', () => {
    expect(parseXread(null)).toEqual([]);
  });

  it.each(['18446744073709551616-0', '0-18446744073709551616', '01-0', '1', '1-', 'a-1', '99999999999999999999-0'])(
    'refuses the id %s',
    (id) => {
      expect(() => parseXread([['a', [entry(id)]]])).toThrow(ReplyShapeError);
    },
  );

  it('refuses a reply of the wrong shape', () => {
    expect(() => parseXread([['a', 'not entries']])).toThrow(ReplyShapeError);
    expect(() => parseXread([['a', [[1700, ['data', 1]]]]])).toThrow(ReplyShapeError);
  });
});

describe('parseEntries and the bytes of the relayed value', () => {
  const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
  const invalid = Buffer.concat([bytes('{"s":"'), Buffer.from([0xff, 0xfe]), bytes('"}')]);
  const reply = (fields: Buffer[]) => [[bytes('1-0'), fields]];

  it('marks an entry whose data is not valid UTF-8 as malformed, keeping its id', () => {
    const [entry] = parseEntries(reply([bytes('data'), invalid]));
    expect(entry).toMatchObject({ id: '1-0', malformed: DATA_NOT_UTF8 });
  });

  it.each([
    ['a truncated multi-byte sequence', Buffer.from([0x22, 0xe2, 0x82, 0x22])],
    ['an overlong encoding', Buffer.from([0x22, 0xc0, 0xaf, 0x22])],
    ['a UTF-16 surrogate', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])],
  ])('refuses %s', (_, value) => {
    expect(parseEntries(reply([bytes('data'), value]))[0]?.malformed).toBe(DATA_NOT_UTF8);
  });

  it('passes valid multi-byte text through exactly, and ignores bytes in fields that are not relayed', () => {
    const text = '{"s":"é ü 𝄞 ✓"}';
    const [entry] = parseEntries(reply([bytes('note'), Buffer.from([0xff]), bytes('data'), bytes(text), bytes('data'), invalid]));
    expect(entry?.malformed).toBeUndefined();
    expect(entry?.fields[3]).toBe(text);
    expect('malformed' in (entry ?? {})).toBe(false);
  });
});
