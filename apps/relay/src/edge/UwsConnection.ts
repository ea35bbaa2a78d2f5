import type { WebSocket } from 'uWebSockets.js';
import type { Connection } from '../core/Connection.js';

export interface SocketData {
  conn: UwsConnection | null;
}

/**
 * Connection over a uWS socket. uWS invalidates a socket object once its close handler ran, and
 * any call on it then throws; `closed` guards every call.
 */
export class UwsConnection implements Connection {
  #closed = false;

  constructor(private readonly ws: WebSocket<SocketData>) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** uWS ran the socket's close handler: every later call is a no-op. */
  markClosed(): void {
    this.#closed = true;
  }

  send(frame: string): boolean {
    if (this.closed) return false;
    // 0 = queued with backpressure, 1 = written, 2 = dropped at the backpressure limit.
    return this.ws.send(frame, false) !== 2;
  }

  subscribe(topic: string): void {
    if (!this.closed) this.ws.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  bufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  cork(fn: () => void): void {
    if (this.closed) fn();
    else this.ws.cork(fn);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.end(code, reason);
  }
}
