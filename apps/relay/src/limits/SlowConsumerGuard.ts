import { CloseCode } from '@streamgate/protocol';
import type { Connection } from '../core/Connection.js';

export interface SlowConsumerGuardOptions {
  /** Bytes queued for one socket beyond which it is cut. */
  readonly maxBufferedBytes: number;
  /** How often a socket with a backlog is checked; every socket is checked once per `slots` of these. */
  readonly checkIntervalMs: number;
  /** Parts the sockets without a backlog are split into, one part checked per interval; default 10. */
  readonly slots?: number;
  readonly onCut: (bufferedBytes: number) => void;
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
 */
export class SlowConsumerGuard {
  private readonly conns = new Set<Connection>();
  /** Sockets that had bytes queued when last checked. */
  private readonly backlogged = new Set<Connection>();
  /** Where the visits of the sockets without a backlog stand: a live iterator, carried across ticks. */
  private cursor: IterableIterator<Connection>;
  private readonly slots: number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: SlowConsumerGuardOptions) {
    this.slots = Math.max(1, Math.floor(options.slots ?? 10));
    this.cursor = this.conns.values();
    this.timer = setInterval(() => this.sweep(), options.checkIntervalMs);
    this.timer.unref();
  }

  /** Sockets watched, and of them those checked every interval. */
  get size(): { sockets: number; backlogged: number } {
    return { sockets: this.conns.size, backlogged: this.backlogged.size };
  }

  add(conn: Connection): void {
    this.conns.add(conn);
  }

  delete(conn: Connection): void {
    this.conns.delete(conn);
    this.backlogged.delete(conn);
  }

  /** One interval: every backlogged socket, and the next part of the others. */
  sweep(): void {
    for (const conn of this.backlogged) {
      // 0 and not cut: it caught up, and is visited with the others again.
      if (this.check(conn) === 0) this.backlogged.delete(conn);
    }
    // The iterator is live: sockets added meanwhile are visited in this round, deleted ones skipped.
    let visits = Math.ceil(this.conns.size / this.slots);
    while (visits-- > 0) {
      let next = this.cursor.next();
      if (next.done === true) {
        // A round is over: the next starts from the first socket.
        this.cursor = this.conns.values();
        next = this.cursor.next();
        if (next.done === true) return;
      }
      const conn = next.value;
      if (this.backlogged.has(conn)) continue;
      const buffered = this.check(conn);
      if (buffered > 0) this.backlogged.add(conn);
    }
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

  close(): void {
    clearInterval(this.timer);
    this.conns.clear();
    this.backlogged.clear();
  }
}
