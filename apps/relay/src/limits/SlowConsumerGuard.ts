import { CloseCode, systemClock } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import type { Connection } from '../core/Connection.js';

/** One watched socket, in the order the sockets came. */
interface Node {
  readonly conn: Connection;
  prev: Node | null;
  next: Node | null;
}

export interface SlowConsumerGuardOptions {
  /** Bytes queued for one socket beyond which it is cut. */
  readonly maxBufferedBytes: number;
  /** How often a socket with a backlog is checked; every socket is checked once per `slots` of these. */
  readonly checkIntervalMs: number;
  /** Parts the sockets without a backlog are split into, one part checked per interval; default 10. */
  readonly slots?: number;
  readonly onCut: (bufferedBytes: number) => void;
  /** Drives the sweeps; the system clock unless a test injects one. */
  readonly clock?: Clock;
}

/**
 * Cuts sockets whose send buffer passed the limit, with 4001 so the client resumes from its last
 * id and catches up from Redis. uWS could close them itself (closeOnBackpressureLimit), but it
 * does so without a close frame (1006), which a client cannot tell from a network fault; and
 * letting uWS skip them instead would be a silent gap. Live frames go out through one publish per
 * entry, so there is no per-socket send to check at, and uWS says nothing when a socket starts to
 * queue (its drain event needs the client to read again, which a stalled one never does).
 *
 * So the cost follows the backlog: a socket seen with bytes queued is checked every interval
 * until it has none; the others, almost all of them on a healthy pod, are visited a part per
 * interval, each once per `slots` intervals. A socket queues only once the kernel's own send
 * buffer is full, and growing from nothing past the limit within those few intervals takes more
 * than the uWS backstop (4× the limit) allows, so the 4001 still comes first.
 * Nothing is lost by the cut: the client's position is the last entry it actually received.
 *
 * Every idle socket is visited once per round, so a visit allocates nothing: the sockets form a
 * list in the order they came, walked by a cursor that stays where the last sweep left it (an
 * iterator kept across sweeps would make a result object per visit: 10,000 a second at 10,000
 * sockets, all young garbage).
 */
export class SlowConsumerGuard {
  private readonly nodes = new Map<Connection, Node>();
  private first: Node | null = null;
  private last: Node | null = null;
  /** The next socket of this round to visit; null past the last (the next visit starts a round). */
  private cursor: Node | null = null;
  /** Sockets that had bytes queued when last checked. */
  private readonly backlogged = new Set<Connection>();
  private readonly slots: number;
  private readonly clock: Clock;
  private cancel: (() => void) | null = null;

  constructor(private readonly options: SlowConsumerGuardOptions) {
    this.slots = Math.max(1, Math.floor(options.slots ?? 10));
    this.clock = options.clock ?? systemClock;
    this.arm();
  }

  /** Sockets watched, and of them those checked every interval. */
  get size(): { sockets: number; backlogged: number } {
    return { sockets: this.nodes.size, backlogged: this.backlogged.size };
  }

  add(conn: Connection): void {
    if (this.nodes.has(conn)) return;
    // At the end: a socket added mid-round is visited in it.
    const node: Node = { conn, prev: this.last, next: null };
    if (this.last === null) this.first = node;
    else this.last.next = node;
    this.last = node;
    this.nodes.set(conn, node);
    // The cursor had passed the last socket without a visit looking further: this one is next.
    this.cursor ??= node;
  }

  delete(conn: Connection): void {
    this.backlogged.delete(conn);
    const node = this.nodes.get(conn);
    if (node === undefined) return;
    this.nodes.delete(conn);
    if (this.cursor === node) this.cursor = node.next;
    if (node.prev === null) this.first = node.next;
    else node.prev.next = node.next;
    if (node.next === null) this.last = node.prev;
    else node.next.prev = node.prev;
  }

  /** One interval: every backlogged socket, and the next part of the others. */
  sweep(): void {
    for (const conn of this.backlogged) {
      // 0 and not cut: it caught up, and is visited with the others again.
      if (this.check(conn) === 0) this.backlogged.delete(conn);
    }
    let visits = Math.ceil(this.nodes.size / this.slots);
    while (visits-- > 0) {
      // A round is over: the next starts from the first socket.
      this.cursor ??= this.first;
      const node = this.cursor;
      if (node === null) return;
      this.cursor = node.next;
      if (this.backlogged.has(node.conn)) continue;
      const buffered = this.check(node.conn);
      if (buffered > 0) this.backlogged.add(node.conn);
    }
  }

  close(): void {
    this.cancel?.();
    this.cancel = null;
    this.nodes.clear();
    this.first = null;
    this.last = null;
    this.cursor = null;
    this.backlogged.clear();
  }

  /**
   * While no socket has a backlog, the timer waits out a whole round and does its `slots` sweeps
   * in one go: each socket is still looked at once per round, but the event loop wakes once a
   * round instead of once an interval (on the relay's VM each wake-up of an idle pod cost about
   * 0.1 ms, and the guard's ten a second were a sixth of what an idle relay spent). A backlog
   * found brings back the sweep every interval.
   */
  private arm(): void {
    const sweeps = this.backlogged.size === 0 ? this.slots : 1;
    this.cancel = this.clock.after(this.options.checkIntervalMs * sweeps, () => {
      try {
        for (let i = 0; i < sweeps; i++) this.sweep();
      } finally {
        // After the sweeps: what they found decides the next wait.
        this.arm();
      }
    });
  }

  /** Cuts the socket if it is past the limit; returns its queued bytes (0 once closed or cut). */
  private check(conn: Connection): number {
    if (conn.closed) {
      this.delete(conn);
      return 0;
    }
    const buffered = conn.bufferedAmount();
    if (buffered <= this.options.maxBufferedBytes) return buffered;
    this.delete(conn);
    this.options.onCut(buffered);
    conn.close(CloseCode.slowConsumer, 'slow consumer: resume from your last id');
    return 0;
  }
}
