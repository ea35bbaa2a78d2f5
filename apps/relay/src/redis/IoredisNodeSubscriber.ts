import type { Redis } from 'ioredis';
import type { StreamName } from '@streamgate/protocol';
import { liveChannel } from '@streamgate/redis';
import { ChannelNames } from './ChannelNames.js';
import type { NodeSubscriber } from './ClusterPubSub.js';
import { guardHandler } from './guardHandler.js';
import { parseLiveMessage } from './parseLiveMessage.js';
import { startHeartbeat } from './SubscriberHeartbeat.js';
import type { LiveMessage } from './parseLiveMessage.js';

export interface NodeSubscriberListeners {
  readonly onEvent: (key: StreamName, event: string) => void;
  readonly onLive: (key: StreamName, message: LiveMessage | null) => void;
  /** The node answered that a live channel's slot is served elsewhere (MOVED, or its own SUNSUBSCRIBE after a migration). */
  readonly onMoved: () => void;
  readonly onHandlerError: (error: Error) => void;
  /** A heartbeat PING failed (SubscriberHeartbeat). */
  readonly onPingError: (error: Error) => void;
}

/**
 * A NodeSubscriber over one plain ioredis connection to one primary, created with
 * `autoResubscribe: false`: each key's keyspace channel by SUBSCRIBE and its live channel by
 * SSUBSCRIBE (a shard channel, in the key's slot: one command per key, as the channels of one
 * SSUBSCRIBE must share a slot). Its listeners run inside ioredis event handlers: what they
 * throw goes to `onHandlerError`.
 */
export class IoredisNodeSubscriber implements NodeSubscriber {
  private readonly stopHeartbeat: () => void;

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly listeners: NodeSubscriberListeners,
  ) {
    connection.on(
      'message',
      guardHandler((channel: string, message: string) => {
        if (channel.startsWith(prefix)) listeners.onEvent(channel.slice(prefix.length), message);
      }, listeners.onHandlerError),
    );
    // As bytes: a live message's data is checked to be UTF-8 before it is decoded (parseLiveMessage).
    const names = new ChannelNames(0);
    connection.on(
      'smessageBuffer',
      guardHandler((channel: Buffer, message: Buffer) => {
        const key = names.liveKey(channel);
        if (key !== null) listeners.onLive(key, parseLiveMessage(message));
      }, listeners.onHandlerError),
    );
    connection.on('moved', guardHandler(listeners.onMoved, listeners.onHandlerError));
    this.stopHeartbeat = startHeartbeat(connection, listeners.onPingError);
  }

  get subscriberReady(): boolean {
    return this.connection.status === 'ready';
  }

  /**
   * The live channels first, then the keyspace channels: a live channel refused (MOVED: its slot
   * left this node) fails the batch with nothing of it left subscribed, so the channels held stay
   * what the caller was told.
   */
  async subscribe(keys: readonly StreamName[]): Promise<void> {
    const live = liveChannels(keys);
    const answers = await Promise.allSettled(live.map((c) => this.connection.ssubscribe(c)));
    const refused = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (refused !== undefined) {
      const held = live.filter((_, i) => answers[i]?.status === 'fulfilled');
      await Promise.allSettled(held.map((c) => this.connection.sunsubscribe(c)));
      throw refused.reason;
    }
    await this.connection.subscribe(...keys.map((k) => this.prefix + k));
  }

  /** A live channel whose slot left this node is held here no more (the node dropped it): MOVED is its success. */
  async unsubscribe(keys: readonly StreamName[]): Promise<void> {
    await Promise.all([
      this.connection.unsubscribe(...keys.map((k) => this.prefix + k)),
      ...liveChannels(keys).map((c) =>
        this.connection.sunsubscribe(c).catch((error: unknown) => {
          if (!(error instanceof Error && error.message.startsWith('MOVED '))) throw error;
        }),
      ),
    ]);
  }

  onReady(listener: () => void): void {
    this.connection.on('ready', guardHandler(listener, this.listeners.onHandlerError));
  }

  onClose(listener: () => void): void {
    this.connection.on('close', guardHandler(listener, this.listeners.onHandlerError));
  }

  /** ioredis reports an unsolicited SUNSUBSCRIBE, like a MOVED answer, as `moved`, without the channel. */
  onChannelsDropped(listener: () => void): void {
    this.connection.on('moved', guardHandler(listener, this.listeners.onHandlerError));
  }

  disconnect(): void {
    this.stopHeartbeat();
    this.connection.disconnect();
  }
}

/** A Redis Cluster has only database 0. */
function liveChannels(keys: readonly StreamName[]): string[] {
  const channels: string[] = [];
  for (const key of keys) {
    const channel = liveChannel(key, 0);
    if (channel !== null) channels.push(channel);
  }
  return channels;
}
