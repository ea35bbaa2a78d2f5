import { describe, expect, it } from 'vitest';
import { parseClientFrame } from './parseFrame.js';

describe('parseClientFrame', () => {
  it('parses a subscribe with a resume id', () => {
    const r = parseClientFrame('{"op":"subscribe","sid":"a","token":"t","from":"5-1"}');
    expect(r).toEqual({ ok: true, frame: { op: 'subscribe', sid: 'a', token: 't', from: '5-1' } });
  });

  it('names the failing field and never throws', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['{', 'frame_not_json', /JSON/],
      ['[1]', 'frame_invalid', /object/],
      ['{"op":"explode"}', 'frame_unknown_op', /op/],
      ['{"op":"subscribe","sid":"a"}', 'token_missing', /token/],
      ['{"op":"subscribe","sid":"a","token":""}', 'token_missing', /token/],
      ['{"op":"subscribe","sid":"a","token":5}', 'frame_invalid', /token/],
      ['{"op":"subscribe","sid":"a","token":"t","from":"x"}', 'frame_invalid', /from/],
      ['{"op":"subscribe","sid":"a b","token":"t"}', 'frame_invalid', /sid/],
      ['{"op":"unsubscribe","sid":"a","extra":1}', 'frame_invalid', /extra|Unrecognized/i],
    ];
    for (const [text, code, message] of cases) {
      const r = parseClientFrame(text);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe(code);
        expect(r.error.message).toMatch(message);
        expect(r.error.retryable).toBe(false);
      }
    }
  });
});
