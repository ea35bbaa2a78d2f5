import { describe, expect, it } from 'vitest';
import { readClientFrame } from './readClientFrame.js';

function read(text: string, maxFrameBytes = 1_000) {
  return readClientFrame(text, Buffer.byteLength(text), maxFrameBytes);
}

describe('readClientFrame', () => {
  it('reads a usable frame', () => {
    expect(read('{"op":"unsubscribe","sid":"a"}')).toEqual({ kind: 'frame', frame: { op: 'unsubscribe', sid: 'a' } });
  });

  it('refuses a frame over the limit by its byte length, without parsing it', () => {
    const text = '{"op":"ping"}';
    const reading = readClientFrame(text, 2_001, 2_000);
    expect(reading).toMatchObject({ kind: 'too_large', error: { code: 'frame_too_large' } });
    expect(reading.kind === 'too_large' && reading.error.message).toBe('frame of 2001 bytes exceeds the limit of 2000');
    expect(readClientFrame(text, 2_000, 2_000).kind).toBe('frame');
  });

  it('tells a frame without its token apart from garbage, keeping the sid', () => {
    expect(read('{"op":"subscribe","sid":"a"}')).toMatchObject({ kind: 'unauthorized', sid: 'a', error: { code: 'token_missing' } });
    expect(read('{"op":"refresh","sid":"b","token":""}')).toMatchObject({ kind: 'unauthorized', sid: 'b' });
  });

  it('calls anything else unusable, with the sid when the frame names one', () => {
    expect(read('not json')).toMatchObject({ kind: 'unusable', sid: undefined, error: { code: 'frame_not_json' } });
    expect(read('{"op":"teleport","sid":"c"}')).toMatchObject({ kind: 'unusable', sid: 'c', error: { code: 'frame_unknown_op' } });
    expect(read('{"sid":"c"}')).toMatchObject({ kind: 'unusable', sid: 'c', error: { code: 'frame_unknown_op' } });
    expect(read('{"op":"teleport","sid":"not a sid"}')).toMatchObject({
      kind: 'unusable',
      sid: undefined,
      error: { code: 'frame_unknown_op' },
    });
    expect(read('{"op":"refresh","sid":"c","token":5}')).toMatchObject({ kind: 'unusable', sid: 'c', error: { code: 'frame_invalid' } });
  });
});
