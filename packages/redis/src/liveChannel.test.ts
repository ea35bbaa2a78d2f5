import { describe, expect, it } from 'vitest';
import { hasLiveChannel, liveChannel, liveChannelStream } from './liveChannel.js';
import { keySlot } from './keySlot.js';

describe('liveChannel', () => {
  it('wraps the hashed part of the name in a tag, so the channel hashes to the stream slot', () => {
    expect(liveChannel('orders:42', 0)).toBe('streamgate@0:{orders:42}orders:42');
    expect(liveChannel('{tenant7}:orders:42', 3)).toBe('streamgate@3:{tenant7}{tenant7}:orders:42');
    for (const stream of ['orders:42', '{tenant7}:orders:42', 'x{y', 'ünïcode:1']) {
      expect(keySlot(liveChannel(stream, 0) ?? ''), stream).toBe(keySlot(stream));
    }
  });

  it('has none for a stream hashed whole whose name holds a closing brace', () => {
    expect(liveChannel('a}b', 0)).toBeNull();
    expect(liveChannel('a{}b', 0)).toBeNull();
    expect(hasLiveChannel('a}b')).toBe(false);
    expect(hasLiveChannel('{t}a}b')).toBe(true);
  });

  it('names the stream back, and nothing for another database or channel', () => {
    for (const stream of ['orders:42', '{tenant7}:orders:42', 'x{y', 'a{b}c']) {
      expect(liveChannelStream(liveChannel(stream, 2) ?? '', 2)).toBe(stream);
      expect(liveChannelStream(liveChannel(stream, 2) ?? '', 0)).toBeNull();
    }
    expect(liveChannelStream('__keyspace@0__:orders', 0)).toBeNull();
  });
});
