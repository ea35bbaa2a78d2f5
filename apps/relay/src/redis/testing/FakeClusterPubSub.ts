import type { StreamName } from '@streamgate/protocol';
import type { ClusterPubSub, NodeSubscriber } from '../ClusterPubSub.js';

/** One fake primary's pub/sub connection: the channels it holds and every command it was sent. */
export class FakeNodeSubscriber implements NodeSubscriber {
  readonly channels = new Set<StreamName>();
  readonly commands: Array<{ readonly kind: 'subscribe' | 'unsubscribe'; readonly keys: readonly StreamName[] }> = [];
  subscriberReady = false;
  disconnected = false;
  private readonly readyListeners: Array<() => void> = [];
  private readonly closeListeners: Array<() => void> = [];
  private readonly droppedListeners: Array<() => void> = [];

  constructor(readonly node: string) {}

  /** The connection (re)connects. */
  becomeReady(): void {
    if (this.disconnected) return;
    this.subscriberReady = true;
    for (const listener of this.readyListeners) listener();
  }

  /** The connection is lost: the node forgets its channels. */
  drop(): void {
    this.subscriberReady = false;
    this.channels.clear();
    for (const listener of this.closeListeners) listener();
  }

  /** The node drops these channels on its own (an unsolicited SUNSUBSCRIBE) and says so, not which. */
  dropChannels(keys: readonly StreamName[]): void {
    for (const key of keys) this.channels.delete(key);
    for (const listener of this.droppedListeners) listener();
  }

  subscribe(keys: readonly StreamName[]): Promise<void> {
    this.commands.push({ kind: 'subscribe', keys: [...keys] });
    for (const key of keys) this.channels.add(key);
    return Promise.resolve();
  }

  unsubscribe(keys: readonly StreamName[]): Promise<void> {
    this.commands.push({ kind: 'unsubscribe', keys: [...keys] });
    for (const key of keys) this.channels.delete(key);
    return Promise.resolve();
  }

  onReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  onChannelsDropped(listener: () => void): void {
    this.droppedListeners.push(listener);
  }

  disconnect(): void {
    this.disconnected = true;
    this.subscriberReady = false;
    this.channels.clear();
  }
}

/**
 * An in-memory Redis Cluster topology: key `"<slot>:<name>"` hashes to `<slot>`, the test assigns
 * slot ranges to primaries and announces changes; connections become ready when the test says
 * (or at once, with `autoReady`).
 */
export class FakeClusterPubSub implements ClusterPubSub {
  private readonly owners = new Map<number, string>();
  private readonly listeners: Array<() => void> = [];
  /** Every connection opened, in order. */
  readonly connections: FakeNodeSubscriber[] = [];
  autoReady = true;

  /** Slots `from`..`to` (inclusive) are served by `node`; call `announce()` to tell the reader. */
  assign(from: number, to: number, node: string | undefined): void {
    for (let slot = from; slot <= to; slot++) {
      if (node === undefined) this.owners.delete(slot);
      else this.owners.set(slot, node);
    }
  }

  announce(): void {
    for (const listener of this.listeners) listener();
  }

  /** The live connection to a node (the last one opened and not disconnected). */
  subscriberOf(node: string): FakeNodeSubscriber | undefined {
    return this.connections.filter((c) => c.node === node && !c.disconnected).at(-1);
  }

  slotOf(key: StreamName): number {
    return Number(key.split(':')[0]);
  }

  ownerOf(slot: number): string | undefined {
    return this.owners.get(slot);
  }

  primaries(): readonly string[] {
    return [...new Set(this.owners.values())];
  }

  onTopology(listener: () => void): void {
    this.listeners.push(listener);
  }

  connect(node: string): NodeSubscriber {
    const subscriber = new FakeNodeSubscriber(node);
    this.connections.push(subscriber);
    if (this.autoReady) queueMicrotask(() => subscriber.becomeReady());
    return subscriber;
  }
}
