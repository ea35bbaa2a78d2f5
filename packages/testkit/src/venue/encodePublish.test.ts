import { describe, expect, it } from 'vitest';
import { encodePublish } from './encodePublish.js';

describe('encodePublish', () => {
  it('encodes a short QoS 0 PUBLISH', () => {
    expect([...encodePublish('a/b', '{}')]).toEqual([0x30, 7, 0, 3, 0x61, 0x2f, 0x62, 0x7b, 0x7d]);
  });

  it('uses a multi-byte remaining length past 127 bytes', () => {
    const frame = encodePublish('quote/BTC-USD', 'x'.repeat(200));
    // 2 + 13 + 200 = 215 = 0xd7 -> 0xd7 & 0x7f | 0x80, 215 >> 7
    expect([...frame.subarray(0, 3)]).toEqual([0x30, 0xd7, 0x01]);
    expect(frame.length).toBe(3 + 215);
    expect(frame.subarray(5, 18).toString()).toBe('quote/BTC-USD');
  });
});
