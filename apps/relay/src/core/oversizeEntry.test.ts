import { describe, expect, it } from 'vitest';
import { oversizeEntry } from './oversizeEntry.js';
import { StreamFrames } from './serverFrames.js';

describe('oversizeEntry', () => {
  it('passes a data value up to the limit in UTF-8 bytes, and names the size and the limit above it', () => {
    const limit = 3000;
    expect(oversizeEntry(['data', `"${'a'.repeat(limit - 2)}"`], limit)).toBeNull();
    // 1,500 two-byte characters: fewer characters than the limit, more bytes.
    const twoByte = `"${'é'.repeat(1500)}"`;
    expect(twoByte.length).toBeLessThan(limit);
    expect(oversizeEntry(['data', twoByte], limit)).toBe(
      `field "data" is 3002 bytes, over this relay's limit of 3000 (RELAY_MAX_ENTRY_BYTES)`,
    );
    // Only the relayed field counts: other fields, and a second `data`, are not sent.
    expect(oversizeEntry(['blob', 'x'.repeat(10_000), 'data', '1', 'data', 'x'.repeat(10_000)], limit)).toBeNull();
    expect(oversizeEntry(['other', '1'], limit)).toBeNull();
  });
});

describe('StreamFrames.entry with an entry limit', () => {
  it('sends an entry over the limit as malformed with its id, before parsing it; one at the limit whole', () => {
    const frames = new StreamFrames('orders:42', 1024);
    const big = `"${'a'.repeat(1023)}"`;
    expect(frames.entry({ id: '5-0', fields: ['data', big] })).toEqual({
      text: JSON.stringify({
        op: 'malformed',
        stream: 'orders:42',
        id: '5-0',
        reason: `field "data" is 1025 bytes, over this relay's limit of 1024 (RELAY_MAX_ENTRY_BYTES)`,
      }),
      malformed: true,
    });
    // Not JSON and too large: the size is what is reported, found without a parse.
    expect(JSON.parse(frames.entry({ id: '6-0', fields: ['data', `{${'a'.repeat(2000)}`] }).text)).toMatchObject({
      op: 'malformed',
      reason: expect.stringContaining('2001 bytes') as string,
    });
    const fits = `"${'a'.repeat(1022)}"`;
    expect(frames.entry({ id: '7-0', fields: ['data', fits] })).toEqual({
      text: `{"op":"event","stream":"orders:42","id":"7-0","data":${fits}}`,
      malformed: false,
    });
  });
});
