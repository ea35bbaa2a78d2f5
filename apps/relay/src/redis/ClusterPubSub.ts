import type { StreamName } from '@streamgate/protocol';

/** One plain pub/sub connection to one Redis Cluster primary (keyspace events are node-local). */
export interface NodeSubscriber {
  /** The connection can take SUBSCRIBE. */
  readonly subscriberReady: boolean;
  /** SUBSCRIBE to these keys' keyspace channels on this node; resolves once it confirmed every one. */
  subscribe(keys: readonly StreamName[]): Promise<void>;
  unsubscribe(keys: readonly StreamName[]): Promise<void>;
  /** Connected (again): the node holds none of this connection's channels. */
  onReady(listener: () => void): void;
  /** Lost: what was subscribed is gone, what was in flight never settles. */
  onClose(listener: () => void): void;
  /**
   * The node dropped some of this connection's live (shard) channels on its own, without saying
   * which: an unsolicited SUNSUBSCRIBE, sent when a slot's ownership is set again (a migration, or
   * `CLUSTER SETSLOT … NODE` naming the owner it already has), or a MOVED answer.
   */
  onChannelsDropped(listener: () => void): void;
  disconnect(): void;
}

/**
 * What ClusterChannels needs of a Redis Cluster: who serves each slot now, word when that may
 * have changed, and a subscriber connection per primary. The ioredis one is
 * IoredisClusterNotifyRedis; the routing is unit-tested against an in-memory one.
 */
export interface ClusterPubSub {
  /** The hash slot of a key (CRC16 of its hash-slot part, mod 16384). */
  slotOf(key: StreamName): number;
  /** The primary serving the slot now (`host:port`); undefined while the slot map has none. */
  ownerOf(slot: number): string | undefined;
  /** Every primary of the slot map now. */
  primaries(): readonly string[];
  /** The slot map may have changed (refreshed, a node added or lost). */
  onTopology(listener: () => void): void;
  /** A new pub/sub connection to this primary; it reconnects with backoff until disconnected. */
  connect(node: string): NodeSubscriber;
}
