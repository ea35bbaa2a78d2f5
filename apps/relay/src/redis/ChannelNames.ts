import type { StreamName } from '@streamgate/protocol';
import { liveChannelPrefix } from '@streamgate/redis';

const CLOSE_BRACE = 0x7d;
const XADD = Buffer.from('xadd');

/**
 * A pub/sub message's channel, read as bytes: two messages arrive per entry a writer publishes
 * (its `xadd` event and its live message), and each decode of a Buffer is a call into C++, so the
 * key is decoded once, from its offset, and the prefixes are compared byte by byte.
 */
export class ChannelNames {
  private readonly keyspace: Buffer;
  private readonly live: Buffer;

  /** `db`: the database whose keyspace and live channels these are. */
  constructor(db: number) {
    this.keyspace = Buffer.from(`__keyspace@${db}__:`);
    this.live = Buffer.from(liveChannelPrefix(db));
  }

  /** The key a keyspace channel names, or null for another channel. */
  keyspaceKey(channel: Buffer): StreamName | null {
    return startsWith(channel, this.keyspace) ? channel.toString('utf8', this.keyspace.length) : null;
  }

  /** A keyspace message's event name; `xadd`, nearly every one, without a decode. */
  event(message: Buffer): string {
    return message.length === XADD.length && startsWith(message, XADD) ? 'xadd' : message.toString();
  }

  /**
   * The stream a live channel names (after the tag's closing brace, as liveChannelStream reads
   * it), or null for another channel. A brace is one byte that no UTF-8 sequence holds, so its
   * byte offset is where the string's would be.
   */
  liveKey(channel: Buffer): StreamName | null {
    if (!startsWith(channel, this.live)) return null;
    const close = channel.indexOf(CLOSE_BRACE, this.live.length);
    return close === -1 ? null : channel.toString('utf8', close + 1);
  }
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
