import { redisFailure, toError } from './redisFailure.js';

/** One server connection the probe can PING (an ioredis Redis, or one node of a Cluster). */
export interface PingTarget {
  ping(): Promise<unknown>;
}

export interface PingProbeOptions {
  /** The connections to probe now: the one instance, or every primary of a Redis Cluster. */
  readonly nodes: () => readonly PingTarget[];
  /** A PING unanswered this long marks its node silent until one is answered. */
  readonly timeoutMs: number;
  readonly now: () => number;
  readonly onError: (error: Error) => void;
}

/**
 * PINGs each node with its own outstanding command and its own timeout. A frozen or partitioned
 * Redis keeps its sockets open (ioredis still says `ready`) while every command waits; only an
 * unanswered PING shows it. One PING at a time per node: a stalled server is not sent a pile.
 */
export class PingProbe {
  private readonly sentAt = new Map<PingTarget, number>();
  /** Nodes whose last PING reached no answer (connection closed, retries exhausted). */
  private readonly unreached = new Set<PingTarget>();

  constructor(private readonly options: PingProbeOptions) {}

  probe(): void {
    const nodes = this.options.nodes();
    for (const node of this.sentAt.keys()) if (!nodes.includes(node)) this.sentAt.delete(node);
    for (const node of this.unreached) if (!nodes.includes(node)) this.unreached.delete(node);
    for (const node of nodes) {
      if (this.sentAt.has(node)) continue;
      this.sentAt.set(node, this.options.now());
      node.ping().then(
        () => {
          this.sentAt.delete(node);
          this.unreached.delete(node);
        },
        (thrown: unknown) => {
          const error = toError(thrown);
          this.sentAt.delete(node);
          // A reply error (LOADING, …) is an answer: the server is there.
          if (redisFailure(error).kind === 'connection') this.unreached.add(node);
          this.options.onError(error);
        },
      );
    }
  }

  /**
   * While no node answers: how long the one heard from last has been silent, counted from the
   * send of its overdue PING (0 for a node whose connection is down: when it last answered is not
   * known). A frozen server is found only once a PING is overdue, but it was silent from before.
   */
  get silentForMs(): number {
    if (this.answering) return 0;
    const now = this.options.now();
    let least = Infinity;
    for (const node of this.options.nodes()) {
      const sent = this.sentAt.get(node);
      least = Math.min(least, this.unreached.has(node) || sent === undefined ? 0 : now - sent);
    }
    return least === Infinity ? 0 : least;
  }

  /** Some node answers: none probed yet, or one whose PING is neither overdue nor unanswered. */
  get answering(): boolean {
    const nodes = this.options.nodes();
    if (nodes.length === 0) return false;
    const now = this.options.now();
    return nodes.some((node) => {
      const sent = this.sentAt.get(node);
      return !this.unreached.has(node) && (sent === undefined || now - sent <= this.options.timeoutMs);
    });
  }
}
