import { Redis } from 'ioredis';
import { liveChannel } from '@streamgate/redis';

// The floor of the relay's live path: what any server built as issue 22 asks (the entry travels
// with its write on a per-stream channel, subscribed per watched stream on one connection, with
// the stream's keyspace channel beside it for foreign producers) must do per entry, and nothing
// more. No position, no gap check, no token, no frame of its own: a live message's value goes to
// the stream's uWS topic as it is. The relay's CPU per entry above this is the relay's own work;
// the floor's own above Socket.IO's says what the design allows on this machine.

/** Publishes a stream's entries to its uWS topic (the stream's name). */
export type PublishToTopic = (topic: string, value: Buffer) => void;

export interface RedisFeed {
  /** Resolves once the stream's channels are subscribed: no entry written after it is missed. */
  watch(stream: string): Promise<void>;
}

const SPACE = 0x20;

/**
 * One subscriber connection for every watched stream, each stream's keyspace channel subscribed
 * beside its live channel as the relay does (the events are received and dropped: the floor pays
 * their decoding, not what the relay does with them).
 */
export function redisFeed(redisUrl: string, publish: PublishToTopic): RedisFeed {
  const sub = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const streamOf = new Map<string, string>();
  sub.on('messageBuffer', (channel: Buffer, message: Buffer) => {
    const stream = streamOf.get(channel.toString('latin1'));
    if (stream === undefined) return;
    const first = message.indexOf(SPACE);
    const second = first < 0 ? -1 : message.indexOf(SPACE, first + 1);
    if (second < 0) return;
    publish(stream, message.subarray(second + 1));
  });
  sub.on('error', (error: Error) => process.stderr.write(`uws floor: redis: ${error.message}\n`));
  return {
    async watch(stream) {
      const channel = liveChannel(stream, 0);
      if (channel === null) throw new Error(`uws floor: ${stream} has no live channel`);
      streamOf.set(channel, stream);
      await sub.subscribe(channel, `__keyspace@0__:${stream}`);
    },
  };
}
