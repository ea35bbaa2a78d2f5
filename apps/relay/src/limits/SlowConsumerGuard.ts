import { CloseCode } from '@streamgate/protocol';
import type { Connection } from '../core/Connection.js';

export interface SlowConsumerGuardOptions {
  /** Bytes queued for one socket beyond which it is cut. */
  readonly maxBufferedBytes: number;
  readonly checkIntervalMs: number;
  readonly onCut: (bufferedBytes: number) => void;
}

/**
 * Cuts sockets whose send buffer passed the limit, with 4001 so the client resumes from its last
 * id and catches up from Redis. uWS could close them itself (closeOnBackpressureLimit), but it
 * does so without a close frame (1006), which a client cannot tell from a network fault; and
 * letting uWS skip them instead would be a silent gap. Live frames go out through one publish per
 * entry, so there is no per-socket send to check at; a sweep is O(sockets) per interval.
 * Nothing is lost by the cut: the client's position is the last entry it actually received.
 */
export class SlowConsumerGuard {
  private readonly conns = new Set<Connection>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: SlowConsumerGuardOptions) {
    this.timer = setInterval(() => this.sweep(), options.checkIntervalMs);
    this.timer.unref();
  }

  add(conn: Connection): void {
    this.conns.add(conn);
  }

  delete(conn: Connection): void {
    this.conns.delete(conn);
  }

  sweep(): void {
    const limit = this.options.maxBufferedBytes;
    for (const conn of this.conns) {
      if (conn.closed) {
        this.conns.delete(conn);
        continue;
      }
      const buffered = conn.bufferedAmount();
      if (buffered <= limit) continue;
      this.conns.delete(conn);
      this.options.onCut(buffered);
      conn.close(CloseCode.slowConsumer, 'slow consumer: resume from your last id');
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.conns.clear();
  }
}
