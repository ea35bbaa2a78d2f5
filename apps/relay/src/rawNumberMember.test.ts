import { describe, expect, it } from 'vitest';
import { rawNumberMember } from './rawNumberMember.js';

describe('rawNumberMember', () => {
  it('returns the number text as written, the last occurrence winning as in JSON.parse', () => {
    expect(rawNumberMember('{"op":"ping","t":1.50}', 't')).toBe('1.50');
    expect(rawNumberMember('{"t":1,"op":"ping","t":-2e+5}', 't')).toBe('-2e+5');
    expect(rawNumberMember('{"t":{"t":[1,"}"]},"x":"\\"t\\":3","t":4}', 't')).toBe('4');
    expect(rawNumberMember(' {\n"t" :\t7 } ', 't')).toBe('7');
  });

  it('is null when the member is missing, not a number, or the text is not an object', () => {
    expect(rawNumberMember('{"op":"ping"}', 't')).toBeNull();
    expect(rawNumberMember('{}', 't')).toBeNull();
    expect(rawNumberMember('{"t":"1"}', 't')).toBeNull();
    expect(rawNumberMember('{"t":1,"t":true}', 't')).toBeNull();
    expect(rawNumberMember('[1]', 't')).toBeNull();
    expect(rawNumberMember('{"t":1', 't')).toBeNull();
    expect(rawNumberMember('{"t" 1}', 't')).toBeNull();
    expect(rawNumberMember('{"t":[1}', 't')).toBeNull();
  });
});
