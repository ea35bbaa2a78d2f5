import { describe, expect, it } from 'vitest';
import { serverFrameSchema } from '@streamgate/protocol';
import {
  StreamFrames,
  errorFrameText,
  liveFrameText,
  pongFrameText,
  reconnectFrameText,
  refreshTokenFrameText,
  refreshedFrameText,
  subscribedFrameText,
  unsubscribedFrameText,
  welcomeFrameText,
} from './serverFrames.js';

/** Parses a frame as a client would: with the protocol's own schema, which must accept it unchanged. */
function wire(text: string): unknown {
  const json: unknown = JSON.parse(text);
  expect(serverFrameSchema.parse(json)).toEqual(json);
  return json;
}

describe('serverFrames', () => {
  it('builds every control frame in the shape the protocol schema accepts', () => {
    expect(wire(welcomeFrameText('relay-1', { maxFrameBytes: 16384, maxSubscriptions: 64 }))).toEqual({
      op: 'welcome',
      protocol: 1,
      node: 'relay-1',
      limits: { maxFrameBytes: 16384, maxSubscriptions: 64 },
    });
    expect(wire(subscribedFrameText('s1', 'orders:42', 'truncated', '5-0', 1700000900))).toEqual({
      op: 'subscribed',
      sid: 's1',
      stream: 'orders:42',
      recovery: 'truncated',
      position: '5-0',
      exp: 1700000900,
    });
    expect(wire(liveFrameText('s1', '7-1'))).toEqual({ op: 'live', sid: 's1', position: '7-1' });
    expect(wire(unsubscribedFrameText('s1', 'token_expired'))).toEqual({ op: 'unsubscribed', sid: 's1', reason: 'token_expired' });
    expect(wire(refreshTokenFrameText('s1', 1700000900))).toEqual({ op: 'refresh_token', sid: 's1', exp: 1700000900 });
    expect(wire(refreshedFrameText('s1', 1700001800))).toEqual({ op: 'refreshed', sid: 's1', exp: 1700001800 });
    expect(wire(reconnectFrameText([{ sid: 's1', stream: 'orders:42', id: '3-0' }], 412, 400))).toEqual({
      op: 'reconnect',
      reason: 'drain',
      positions: [{ sid: 's1', stream: 'orders:42', id: '3-0' }],
      sinceDrainMs: 412,
      dueMs: 400,
    });
  });

  it('names the sid of an error only when there is one, and echoes a ping time only when given', () => {
    expect(wire(errorFrameText('frame_invalid', false, 'sid: required'))).toEqual({
      op: 'error',
      code: 'frame_invalid',
      retryable: false,
      message: 'sid: required',
    });
    expect(wire(errorFrameText('stream_unavailable', true, 'down', 's2'))).toEqual({
      op: 'error',
      sid: 's2',
      code: 'stream_unavailable',
      retryable: true,
      message: 'down',
    });
    expect(pongFrameText(undefined)).toBe('{"op":"pong"}');
    expect(wire(pongFrameText(12.5))).toEqual({ op: 'pong', t: 12.5 });
  });

  it("splices an entry's stored JSON into its event frame byte for byte", () => {
    const frames = new StreamFrames('orders:42');
    const stored = '{"qty":3.10,"note":"caf\\u00e9","n":[1,2]}';
    const frame = frames.entry({ id: '9-2', fields: ['other', 'x', 'data', stored] });
    expect(frame).toEqual({ text: `{"op":"event","stream":"orders:42","id":"9-2","data":${stored}}`, malformed: false });
    expect(wire(frame.text)).toEqual({ op: 'event', stream: 'orders:42', id: '9-2', data: JSON.parse(stored) as unknown });
  });

  it('turns an entry out of the entry format into a malformed frame that still carries its id', () => {
    const frames = new StreamFrames('orders:42');
    const missing = frames.entry({ id: '9-3', fields: ['payload', '{}'] });
    expect(missing.malformed).toBe(true);
    expect(wire(missing.text)).toEqual({ op: 'malformed', stream: 'orders:42', id: '9-3', reason: 'entry has no "data" field' });
    const notJson = frames.entry({ id: '9-4', fields: ['data', '{nope'] });
    expect(wire(notJson.text)).toMatchObject({ op: 'malformed', id: '9-4', reason: 'field "data" is not JSON' });
  });

  it('builds the stream_reset notice and a malformed frame for an entry the source flagged', () => {
    const frames = new StreamFrames('orders:42');
    expect(wire(frames.reset('0-0'))).toEqual({ op: 'stream_reset', stream: 'orders:42', position: '0-0' });
    const flagged = frames.entry({ id: '9-5', fields: ['data', '"ok"'], malformed: 'field "data" is not valid UTF-8' });
    expect(flagged.malformed).toBe(true);
    expect(wire(flagged.text)).toEqual({ op: 'malformed', stream: 'orders:42', id: '9-5', reason: 'field "data" is not valid UTF-8' });
  });
});
