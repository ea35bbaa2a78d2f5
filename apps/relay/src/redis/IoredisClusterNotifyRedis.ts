import type { Cluster, Redis } from 'ioredis';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { keySlot } from '@streamgate/redis';
import type { ClusterPubSub, NodeSubscriber } from './ClusterPubSub.js';
import { groupIndexes } from './groupIndexes.js';
import { guardHandler } from './guardHandler.js';
import { IoredisNodeSubscriber } from './IoredisNodeSubscriber.js';
import type { KeyRead, NotifyReads } from './NotifyRedis.js';
import type { LiveMessage } from './parseLiveMessage.js';
import { parseXread } from './parseReplies.js';
import { pipelineByNode } from './pipelineByNode.js';
import type { KeyedCall, PipelineReplies } from './pipelineByNode.js';
import { toError } from './redisFailure.js';

export interface IoredisClusterNotifyOptions {
  /** Cluster client for the non-blocking reads; its slot map is the topology the channels follow. */
  readonly reader: Cluster;
  /** A plain pub/sub connection to one primary (`host:port`), created with `autoResubscribe: false`. */
  readonly connect: (node: string) => Redis;
  readonly count: number;
  /** A node's pipeline failed (its keys' reads answer that error). */
  readonly onNodeError: (error: Error) => void;
  /**
   * A node's share of a read not answered within this is abandoned for the round (its keys are
   * read again later, from the same positions): a frozen primary must not hold up the others.
   */
  readonly nodeDeadlineMs?: number;
  /** A listener threw inside an ioredis event handler: told here (logged and counted), never rethrown into ioredis. */
  readonly onHandlerError: (error: Error) => void;
  /** A pub/sub connection's heartbeat PING failed (SubscriberHeartbeat). */
  readonly onPingError: (error: Error) => void;
}

/** A Redis Cluster has only database 0, and so one keyspace channel prefix. */
const PREFIX = '__keyspace@0__:';
/**
 * While a primary's pub/sub connection is down the slot map is fetched this often: a replica
 * promoted in its place is found, and its channels subscribed, this soon after it takes writes,
 * rather than at the periodic refresh.
 */
export const DOWN_REFRESH_MS = 150;

/**
 * NotifyReads and ClusterPubSub over ioredis on a Redis Cluster. A grouped read is one
 * `XREAD COUNT n STREAMS …` per hash slot (never a key of another slot in it: CROSSSLOT), the
 * slot groups of one node sent as one pipeline; an error in one slot group is only its keys'.
 */
export class IoredisClusterNotifyRedis implements NotifyReads, ClusterPubSub {
  private readonly listeners: Array<(key: StreamName, event: string) => void> = [];
  private readonly liveListeners: Array<(key: StreamName, message: LiveMessage | null) => void> = [];
  private readonly subscribers = new Set<Redis>();
  /** Nodes whose abandoned read is still unanswered (pipelineByNode's NodeDeadline). */
  private readonly stalled = new Set<string>();
  private downRefresh: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: IoredisClusterNotifyOptions) {}

  get readReady(): boolean {
    return this.options.reader.status === 'ready';
  }

  /** One read connection and one subscriber per primary. */
  get connectionCount(): number {
    return this.options.reader.nodes('master').length + this.subscribers.size;
  }

  read(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    return this.readGroups(
      reads,
      reads.map((_, i) => [i]),
    );
  }

  readGrouped(reads: ReadonlyArray<readonly [StreamName, StreamId]>): Promise<KeyRead[]> {
    return this.readGroups(reads, [...groupIndexes(reads, ([key]) => keySlot(key)).values()]);
  }

  onEvent(listener: (key: StreamName, event: string) => void): void {
    this.listeners.push(listener);
  }

  onLive(listener: (key: StreamName, message: LiveMessage | null) => void): void {
    this.liveListeners.push(listener);
  }

  onReadClose(listener: () => void): void {
    this.options.reader.on('close', guardHandler(listener, this.options.onHandlerError));
  }

  disconnect(): void {
    this.closed = true;
    if (this.downRefresh !== null) clearTimeout(this.downRefresh);
    this.options.reader.disconnect();
    for (const subscriber of this.subscribers) subscriber.disconnect();
    this.subscribers.clear();
  }

  slotOf(key: StreamName): number {
    return keySlot(key);
  }

  ownerOf(slot: number): string | undefined {
    return this.options.reader.slots[slot]?.[0];
  }

  primaries(): readonly string[] {
    const primaries = new Set<string>();
    for (const nodes of this.options.reader.slots) if (nodes?.[0] !== undefined) primaries.add(nodes[0]);
    return [...primaries];
  }

  onTopology(listener: () => void): void {
    for (const event of ['refresh', '+node', '-node']) this.options.reader.on(event, guardHandler(listener, this.options.onHandlerError));
  }

  connect(node: string): NodeSubscriber {
    const connection = this.options.connect(node);
    this.subscribers.add(connection);
    connection.once('end', () => this.subscribers.delete(connection));
    connection.on(
      'close',
      guardHandler(() => this.refreshWhileDown(), this.options.onHandlerError),
    );
    return new IoredisNodeSubscriber(connection, PREFIX, {
      onEvent: (key, event) => {
        for (const listener of this.listeners) listener(key, event);
      },
      onLive: (key, message) => {
        for (const listener of this.liveListeners) listener(key, message);
      },
      // The slot map is stale: fetch it now rather than at the next periodic refresh, so the
      // channels follow the slot at once (ClusterChannels, on the refresh event).
      onMoved: () => this.options.reader.refreshSlotsCache(),
      onHandlerError: this.options.onHandlerError,
      onPingError: this.options.onPingError,
    });
  }

  /**
   * A primary's connection was lost: it may be failing over. Until every primary's connection is
   * up again (or the lost one is out of the slot map, and its connection closed), the slot map is
   * fetched every DOWN_REFRESH_MS; ClusterChannels follows each refresh.
   */
  private refreshWhileDown(): void {
    if (this.downRefresh !== null || this.closed) return;
    const tick = (): void => {
      this.downRefresh = null;
      if (this.closed || [...this.subscribers].every((s) => s.status === 'ready')) return;
      this.options.reader.refreshSlotsCache();
      this.downRefresh = setTimeout(tick, DOWN_REFRESH_MS);
      this.downRefresh.unref();
    };
    this.downRefresh = setTimeout(tick, DOWN_REFRESH_MS);
    this.downRefresh.unref();
  }

  /** One XREAD per group of positions (all of one slot), pipelined per node; results in `reads` order. */
  private async readGroups(reads: ReadonlyArray<readonly [StreamName, StreamId]>, groups: number[][]): Promise<KeyRead[]> {
    const calls = groups.map((indexes): KeyedCall => {
      const keys = indexes.map((i) => (reads[i] as readonly [StreamName, StreamId])[0]);
      const ids = indexes.map((i) => (reads[i] as readonly [StreamName, StreamId])[1]);
      // As bytes: parseEntries checks the relayed values are UTF-8 before decoding them.
      return { key: keys[0] as string, command: 'XREAD', args: ['COUNT', this.options.count, 'STREAMS', ...keys, ...ids], buffer: true };
    });
    const replies: PipelineReplies = await pipelineByNode(
      this.options.reader,
      calls,
      this.options.onNodeError,
      this.options.nodeDeadlineMs === undefined ? undefined : { ms: this.options.nodeDeadlineMs, stalled: this.stalled },
    );
    const results: KeyRead[] = new Array<KeyRead>(reads.length);
    groups.forEach((indexes, g) => {
      const [error, reply] = replies[g] ?? [new Error(`no reply ${g} in a pipelined read`), null];
      let batches: Map<string, KeyRead> | Error;
      if (error !== null) batches = error;
      else {
        try {
          batches = new Map(parseXread(reply).map(([key, entries]) => [key, { ok: true, entries }]));
        } catch (thrown) {
          batches = toError(thrown);
        }
      }
      for (const i of indexes) {
        const key = (reads[i] as readonly [StreamName, StreamId])[0];
        results[i] = batches instanceof Error ? { ok: false, error: batches } : (batches.get(key) ?? { ok: true, entries: [] });
      }
    });
    return results;
  }
}
