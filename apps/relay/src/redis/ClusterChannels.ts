import type { StreamName } from '@streamgate/protocol';
import type { ClusterPubSub, NodeSubscriber } from './ClusterPubSub.js';
import type { KeyspaceChannelHooks, KeyspaceChannels } from './KeyspaceChannels.js';
import { SubscriptionSync } from './SubscriptionSync.js';
import type { Clock } from '@streamgate/protocol';

export interface ClusterChannelsOptions extends KeyspaceChannelHooks {
  readonly pubsub: ClusterPubSub;
  readonly clock: Clock;
  /** Channels per SUBSCRIBE or UNSUBSCRIBE, per node. Default 500. */
  readonly batchSize?: number;
  /** Commands awaiting their confirmation at once, per node. Default 4. */
  readonly maxInFlight?: number;
}

interface NodeChannels {
  readonly subscriber: NodeSubscriber;
  readonly sync: SubscriptionSync;
}

/**
 * Keyspace channels on a Redis Cluster. A keyspace event is published only on the node that
 * holds the key, so each watched key's channel is subscribed on the primary serving its slot, over
 * one plain pub/sub connection per primary: connections per relay grow with the primaries, never
 * with the keys. When the slot map changes (failover, resharding) a key whose primary changed is
 * unsubscribed from the old one and subscribed on the new one, and read once that is confirmed:
 * it may have been written while no channel covered it; its incarnation is looked at too (what
 * the old primary acknowledged may be missing on a promoted replica). A lost node connection reconnects and
 * its keys are subscribed again and read (SubscriptionSync per node); a new primary gets a
 * connection, one that is no longer a primary loses its own.
 */
export class ClusterChannels implements KeyspaceChannels {
  private readonly nodes = new Map<string, NodeChannels>();
  /** Each watched key's primary as last routed (undefined: no primary served its slot then). */
  private readonly routes = new Map<StreamName, string | undefined>();
  private readonly slots = new Map<StreamName, number>();
  /** Watched keys that have had a primary (a slot left without one, then served again, moved). */
  private readonly servedBy = new Set<StreamName>();
  private running = true;

  constructor(private readonly options: ClusterChannelsOptions) {
    options.pubsub.onTopology(() => this.refresh());
    this.refresh();
  }

  /**
   * The slot map is known and some primary's connection can take SUBSCRIBE. One primary's
   * connection down (a failover under way) does not make the target unready: the other primaries'
   * streams keep being served, that node's keys are subscribed again and read once it (or its
   * promoted replica) answers.
   */
  get ready(): boolean {
    for (const node of this.nodes.values()) if (node.subscriber.subscriberReady) return true;
    return false;
  }

  get channelCount(): number {
    let count = 0;
    for (const node of this.nodes.values()) count += node.sync.channelCount;
    return count;
  }

  /** Primaries with a subscriber connection. */
  get nodeCount(): number {
    return this.nodes.size;
  }

  /** The primary a watched key's channel is held on (or being subscribed on). */
  nodeOf(key: StreamName): string | undefined {
    return this.routes.get(key);
  }

  isSubscribed(key: StreamName): boolean {
    const node = this.routes.get(key);
    return node !== undefined && this.nodes.get(node)?.sync.isSubscribed(key) === true;
  }

  changed(key: StreamName): void {
    if (!this.running) return;
    const previous = this.routes.get(key);
    if (!this.options.wanted(key)) {
      this.routes.delete(key);
      this.slots.delete(key);
      this.servedBy.delete(key);
      if (previous !== undefined) this.nodes.get(previous)?.sync.changed(key);
      return;
    }
    const owner = this.ownerOf(key);
    this.routes.set(key, owner);
    if (previous !== undefined && previous !== owner) this.nodes.get(previous)?.sync.changed(key);
    if (owner === undefined) return;
    this.node(owner).sync.changed(key);
    this.servedBy.add(key);
  }

  /** Looks at the slot map again: connections follow the primaries, channels follow the slots. */
  refresh(): void {
    if (!this.running) return;
    const primaries = new Set(this.options.pubsub.primaries());
    for (const node of primaries) this.node(node);
    for (const [key, previous] of this.routes) {
      const owner = this.ownerOf(key);
      if (owner === previous) continue;
      this.routes.set(key, owner);
      if (previous !== undefined) this.nodes.get(previous)?.sync.changed(key);
      if (owner === undefined) continue;
      this.node(owner).sync.changed(key);
      if (previous !== undefined || this.servedBy.has(key)) this.options.onMoved(key);
      this.servedBy.add(key);
    }
    // Closed last: a demoted or lost primary's keys were routed elsewhere above.
    for (const [node, channels] of this.nodes) {
      if (primaries.has(node)) continue;
      this.nodes.delete(node);
      channels.sync.close();
      channels.subscriber.disconnect();
    }
  }

  close(): void {
    this.running = false;
    for (const channels of this.nodes.values()) {
      channels.sync.close();
      channels.subscriber.disconnect();
    }
    this.nodes.clear();
  }

  private ownerOf(key: StreamName): string | undefined {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.options.pubsub.slotOf(key);
      this.slots.set(key, slot);
    }
    return this.options.pubsub.ownerOf(slot);
  }

  private node(node: string): NodeChannels {
    const existing = this.nodes.get(node);
    if (existing !== undefined) return existing;
    const subscriber = this.options.pubsub.connect(node);
    const sync = new SubscriptionSync({
      redis: subscriber,
      clock: this.options.clock,
      wanted: (key) => this.options.wanted(key) && this.routes.get(key) === node,
      onConfirmed: this.options.onConfirmed,
      onError: this.options.onError,
      ...(this.options.batchSize === undefined ? {} : { batchSize: this.options.batchSize }),
      ...(this.options.maxInFlight === undefined ? {} : { maxInFlight: this.options.maxInFlight }),
    });
    subscriber.onClose(() => sync.connectionLost());
    subscriber.onReady(() => sync.connectionReady(this.keysOn(node)));
    // The slot may still be this node's (a SETSLOT naming its owner again): its keys are subscribed
    // again here; a key whose slot left is refused (MOVED) and follows the refreshed slot map.
    subscriber.onChannelsDropped(() => sync.channelsDropped());
    const channels = { subscriber, sync };
    this.nodes.set(node, channels);
    return channels;
  }

  private *keysOn(node: string): Iterable<StreamName> {
    for (const [key, owner] of this.routes) if (owner === node) yield key;
  }
}
