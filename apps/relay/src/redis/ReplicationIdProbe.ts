import { toError } from './redisFailure.js';

/** One server connection whose replication id can be asked (an ioredis Redis, or one node of a Cluster). */
export interface ReplicationIdTarget {
  call(command: 'INFO', section: 'replication'): Promise<unknown>;
}

export interface ReplicationIdProbeOptions {
  /** The connections to ask now: the one instance, or every primary of a Redis Cluster. */
  readonly nodes: () => readonly ReplicationIdTarget[];
  /** A node's replication id changed since it was last asked: it holds another history now. */
  readonly onChange: () => void;
  readonly onError: (error: Error) => void;
}

/**
 * Asks each node its `master_replid` (INFO replication), one question at a time per node. The id
 * changes exactly when a server's data stops following the history it had: a replica promoted
 * (REPLICAOF NO ONE, a failover), a server made the replica of another one (a full resync), a
 * restart without its replication state. A connection loss says so too, but these can happen
 * while the relay's connections stay up, and then only this shows that what the relay read may
 * be gone: one small reply per node per second instead of a look at every key.
 */
export class ReplicationIdProbe {
  private readonly ids = new Map<ReplicationIdTarget, string>();
  private readonly asking = new Set<ReplicationIdTarget>();

  constructor(private readonly options: ReplicationIdProbeOptions) {}

  probe(): void {
    const nodes = this.options.nodes();
    for (const node of this.ids.keys()) if (!nodes.includes(node)) this.ids.delete(node);
    for (const node of nodes) {
      if (this.asking.has(node)) continue;
      this.asking.add(node);
      node.call('INFO', 'replication').then(
        (reply) => {
          this.asking.delete(node);
          this.seen(node, reply);
        },
        (thrown: unknown) => {
          this.asking.delete(node);
          this.options.onError(toError(thrown));
        },
      );
    }
  }

  private seen(node: ReplicationIdTarget, reply: unknown): void {
    const id = typeof reply === 'string' ? /^master_replid:(\S+)/m.exec(reply)?.[1] : undefined;
    // A Redis-compatible server that does not report one: nothing to compare, nothing wrong.
    if (id === undefined) return;
    const before = this.ids.get(node);
    this.ids.set(node, id);
    if (before !== undefined && before !== id) this.options.onChange();
  }
}
