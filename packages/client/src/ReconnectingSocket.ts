import { backoffDelay, CloseCode, reconnectAdvice } from '@streamgate/protocol';
import type { ClientFrame, RelayError, ServerFrame } from '@streamgate/protocol';
import type { ResolvedBackoff } from './backoff.js';
import type { Clock } from '@streamgate/protocol';
import { LivenessWatch } from './LivenessWatch.js';
import { RelaySocket } from './RelaySocket.js';
import type { RelayLogger } from './logger.js';
import type { WebSocketConstructor } from './webSocketLike.js';

/**
 * - `idle`: no socket yet. `connecting`/`open`: a socket exists. `waiting`: a reconnect is scheduled.
 * - `halted`: the relay closed with a code that forbids reconnecting; a new `subscribe()` starts over.
 * - `closed`: `close()` was called.
 */
export type ConnectionStatus = 'idle' | 'connecting' | 'open' | 'waiting' | 'halted' | 'closed';

export interface ReconnectingSocketEvents {
  onOpen(): void;
  onFrame(frame: ServerFrame): void;
  onBadFrame(error: RelayError): void;
  /**
   * The socket is gone; a reconnect may already be scheduled. `halting`: onHalted follows at
   * once and closes every subscription, which must not pass through `connecting` on the way.
   */
  onDisconnected(halting: boolean): void;
  /** The relay said not to reconnect. */
  onHalted(code: number, reason: string): void;
}

export interface ReconnectingSocketOptions {
  urls: readonly string[];
  WebSocket: WebSocketConstructor;
  backoff: ResolvedBackoff;
  logger: RelayLogger;
  healthyAfterMs: number;
  /** Liveness deadlines (LivenessWatch). */
  clock: Clock;
  /** How long past the relay's ping interval a silent socket is kept before it is given up. */
  livenessGraceMs: number;
  events: ReconnectingSocketEvents;
}

/** Owns the one socket: which URL, when to reconnect, and how long to wait. */
export class ReconnectingSocket {
  readonly #options: ReconnectingSocketOptions;
  #connection: RelaySocket | undefined;
  /** The "heard nothing" deadline of the current socket. */
  #watch: LivenessWatch | undefined;
  #status: ConnectionStatus = 'idle';
  #urlIndex = 0;
  #attempt = 0;
  #immediateStreak = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ReconnectingSocketOptions) {
    this.#options = options;
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  get url(): string {
    return this.#options.urls[this.#urlIndex] ?? '';
  }

  get isOpen(): boolean {
    return this.#connection?.isOpen ?? false;
  }

  /** Connects unless a socket exists, a reconnect is scheduled, or the relay said to stop. */
  ensure(): void {
    if (this.#status === 'halted') this.#status = 'idle';
    if (this.#status === 'idle') this.#connect();
  }

  send(frame: ClientFrame): boolean {
    return this.#connection?.send(frame) ?? false;
  }

  /** Leaves the current pod now, as a drain notice asks, and goes to another one. */
  drain(): void {
    const conn = this.#connection;
    if (conn === undefined) return;
    conn.close(1000, 'drain');
    this.#closed(conn, CloseCode.drainReconnect, 'drain');
  }

  close(): void {
    this.#status = 'closed';
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#watch?.stop();
    this.#connection?.close(1000, 'client closed');
    this.#connection = undefined;
  }

  #connect(): void {
    const { WebSocket, logger, events } = this.#options;
    const url = this.url;
    this.#status = 'connecting';
    let conn: RelaySocket | undefined;
    const watch = new LivenessWatch(this.#options.clock, this.#options.livenessGraceMs, () => {
      if (conn !== undefined) this.#silent(conn, watch);
    });
    try {
      conn = new RelaySocket(
        url,
        WebSocket,
        {
          onOpen: () => {
            if (conn !== this.#connection) return;
            watch.heard();
            this.#status = 'open';
            events.onOpen();
          },
          onFrame: (frame) => {
            if (conn === undefined || conn !== this.#connection) return;
            watch.heard();
            if (frame.op === 'ping') {
              conn.send({ op: 'pong' });
              return;
            }
            if (frame.op === 'welcome' && frame.pingIntervalMs !== undefined) watch.setInterval(frame.pingIntervalMs);
            events.onFrame(frame);
          },
          onBadFrame: (error) => {
            watch.heard();
            events.onBadFrame(error);
          },
          onClose: (code, reason) => {
            if (conn !== undefined) this.#closed(conn, code, reason);
          },
        },
        logger,
      );
    } catch (error) {
      // A browser throws synchronously on a malformed URL; another URL may be fine.
      logger.error('could not open a socket', { url, error });
      watch.stop();
      this.#schedule({ backoff: true, preferOtherPod: true });
      return;
    }
    this.#connection = conn;
    this.#watch = watch;
  }

  /**
   * Nothing arrived for the relay's ping interval plus the grace: the socket is half-open (a NAT
   * that dropped its state, a proxy that stopped forwarding, a laptop that slept), and its close
   * would never come. Given up like a relay close with 4006: another pod, then resume.
   */
  #silent(conn: RelaySocket, watch: LivenessWatch): void {
    if (conn !== this.#connection) return;
    this.#options.logger.warn('heard nothing from the relay: reconnecting', { url: conn.url, silentMs: watch.boundMs });
    conn.close(CloseCode.pingTimeout, 'heard nothing from the relay');
    this.#closed(conn, CloseCode.pingTimeout, 'heard nothing from the relay');
  }

  #closed(conn: RelaySocket, code: number, reason: string): void {
    if (conn !== this.#connection) return;
    this.#connection = undefined;
    this.#watch?.stop();
    this.#watch = undefined;
    const { logger, events, healthyAfterMs } = this.#options;
    if (conn.welcomed && Date.now() - conn.openedAt >= healthyAfterMs) {
      this.#attempt = 0;
      this.#immediateStreak = 0;
    }
    logger.debug('socket closed', { url: conn.url, code, reason });
    if (this.#status === 'closed') return;
    const advice = reconnectAdvice(code);
    if (!advice.reconnect) {
      this.#status = 'halted';
      events.onDisconnected(true);
      events.onHalted(code, reason);
      return;
    }
    // A relay that could not be reached, or vanished without a close frame, may be gone for good
    // (a killed pod): move on to the next URL rather than retrying this one.
    const unreachable = !conn.welcomed || code === 1006;
    this.#schedule(unreachable ? { backoff: advice.backoff, preferOtherPod: true } : advice);
    events.onDisconnected(false);
  }

  #schedule(plan: { backoff: boolean; preferOtherPod: boolean }): void {
    const { urls, backoff } = this.#options;
    if (plan.preferOtherPod && urls.length > 1) this.#urlIndex = (this.#urlIndex + 1) % urls.length;
    // An immediate reconnect is allowed once per URL in a row; a relay that keeps sending us
    // away at once then gets the same backoff as any other failure.
    let delay: number;
    if (!plan.backoff && this.#immediateStreak < urls.length) {
      this.#immediateStreak += 1;
      delay = 0;
    } else {
      delay = backoffDelay(this.#attempt++, backoff.baseMs, backoff.maxMs);
    }
    this.#status = 'waiting';
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#status === 'waiting') this.#connect();
    }, delay);
  }
}
