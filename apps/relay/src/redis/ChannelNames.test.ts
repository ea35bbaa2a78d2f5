import { liveChannel, liveChannelStream } from '@streamgate/redis';
import { describe, expect, it } from 'vitest';
import { ChannelNames } from './ChannelNames.js';

describe('ChannelNames', () => {
  const names = new ChannelNames(3);

  it('reads the key of a keyspace channel of its database only', () => {
    expect(names.keyspaceKey(Buffer.from('__keyspace@3__:task:{é}x'))).toBe('task:{é}x');
    expect(names.keyspaceKey(Buffer.from('__keyspace@3__:'))).toBe('');
    expect(names.keyspaceKey(Buffer.from('__keyspace@30__:a'))).toBeNull();
    expect(names.keyspaceKey(Buffer.from('__keyspace@3_'))).toBeNull();
    expect(names.keyspaceKey(Buffer.from('streamgate@3:{a}a'))).toBeNull();
  });

  it('reads the stream of a live channel as liveChannelStream does', () => {
    for (const stream of ['a', 'task:{7}é', 'ü{x}y', '{}', 'a}b']) {
      const channel = liveChannel(stream, 3);
      if (channel === null) continue;
      expect(names.liveKey(Buffer.from(channel)), channel).toBe(liveChannelStream(channel, 3));
      expect(names.liveKey(Buffer.from(channel)), channel).toBe(stream);
    }
    for (const channel of ['streamgate@3:{a', 'streamgate@4:{a}a', 'streamgate@3:', '__keyspace@3__:a'])
      expect(names.liveKey(Buffer.from(channel)), channel).toBe(liveChannelStream(channel, 3));
  });

  it('names keyspace events, xadd without decoding', () => {
    for (const event of ['xadd', 'xad', 'xaddx', 'del', 'xtrim', 'xgroup-create', 'rename_to'])
      expect(names.event(Buffer.from(event))).toBe(event);
  });
});
