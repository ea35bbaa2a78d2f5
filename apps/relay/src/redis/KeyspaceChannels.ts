import type { StreamName } from '@streamgate/protocol';

/**
 * The keyspace channels of a NotifyReader's watched keys, however they are held: one pub/sub
 * connection (SubscriptionSync) or one per Redis Cluster primary (ClusterChannels).
 */
export interface KeyspaceChannels {
  /** Every connection that should hold channels can take SUBSCRIBE. */
  readonly ready: boolean;
  /** Channels the server(s) confirmed. */
  readonly channelCount: number;
  isSubscribed(key: StreamName): boolean;
  /** The key was watched or unwatched. */
  changed(key: StreamName): void;
  close(): void;
}

/** What a NotifyReader tells the channels it builds. */
export interface KeyspaceChannelHooks {
  /** Whether the reader watches this key now. */
  readonly wanted: (key: StreamName) => boolean;
  /** Every watched key. */
  readonly watched: () => Iterable<StreamName>;
  /**
   * These keys' channels were confirmed (first time, after a reconnect, or on a new node after a
   * slot moved): entries may have been written while no channel covered them, so read them.
   */
  readonly onConfirmed: (keys: readonly StreamName[]) => void;
  readonly onError: (error: Error) => void;
}

export type KeyspaceChannelsFactory = (hooks: KeyspaceChannelHooks) => KeyspaceChannels;
