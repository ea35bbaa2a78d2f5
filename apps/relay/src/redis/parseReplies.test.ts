import { describe, expect, it } from 'vitest';
import { ReplyShapeError, parseXread } from './parseReplies.js';

const entry = (id: string) => [id, ['data', '{"n":1}']];

describe('parseXread', () => {
  it('parses entries of several streams with their fields', () => {
    const parsed = parseXread([
      ['a', [entry('1700000000000-0'), entry('1700000000000-1')]],
      ['b', [entry('5-18446744073709551615')]],
    ]);
    expect(parsed).toEqual([
      ['a', [{ id: '1700000000000-0', fields: ['data', '{"n":1}'] }, { id: '1700000000000-1', fields: ['data', '{"n":1}'] }]],
      ['b', [{ id: '5-18446744073709551615', fields: ['data', '{"n":1}'] }]],
    ]);
  });

  it('returns nothing on a timed-out read', () => {
    expect(parseXread(null)).toEqual([]);
  });

  it.each(['18446744073709551616-0', '0-18446744073709551616', '01-0', '1', '1-', 'a-1', '99999999999999999999-0'])('refuses the id %s', (id) => {
    expect(() => parseXread([['a', [entry(id)]]])).toThrow(ReplyShapeError);
  });

  it('refuses a reply of the wrong shape', () => {
    expect(() => parseXread([['a', 'not entries']])).toThrow(ReplyShapeError);
    expect(() => parseXread([['a', [[1700, ['data', 1]]]]])).toThrow(ReplyShapeError);
  });
});
