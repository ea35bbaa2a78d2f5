import { parseServerFrame, relayError } from '@streamgate/protocol';
import type { ClientFrame, RelayError, ServerFrame } from '@streamgate/protocol';
import type { RelayLogger } from './logger.js';
import { WS_OPEN } from './webSocketLike.js';
import type { WebSocketConstructor, WebSocketLike } from './webSocketLike.js';

export interface RelaySocketHandlers {
  onOpen(): void;
  onFrame(frame: ServerFrame): void;
  /** A frame that did not parse; reported, never thrown. */
  onBadFrame(error: RelayError): void;
  onClose(code: number, reason: string): void;
}

/**
 * One socket to one relay URL. After `close()` (or the socket's own close) no handler runs
 * again, so a socket being replaced can never deliver into the client's new state.
 */
export class RelaySocket {
  readonly url: string;
  readonly openedAt: number;
  #welcomed = false;
  #socket: WebSocketLike;
  #handlers: RelaySocketHandlers | undefined;
  #logger: RelayLogger;

  constructor(url: string, WebSocketImpl: WebSocketConstructor, handlers: RelaySocketHandlers, logger: RelayLogger) {
    this.url = url;
    this.openedAt = Date.now();
    this.#handlers = handlers;
    this.#logger = logger;
    this.#socket = new WebSocketImpl(url);
    this.#socket.addEventListener('open', () => this.#dispatch('open', (h) => h.onOpen()));
    this.#socket.addEventListener('message', (event) => this.#onMessage(event.data));
    this.#socket.addEventListener('close', (event) => {
      const handlers = this.#handlers;
      this.#handlers = undefined;
      if (handlers !== undefined) this.#guard('close', () => handlers.onClose(event.code, event.reason));
    });
    // The close event that always follows carries the code; the error event carries nothing useful.
    this.#socket.addEventListener('error', () => this.#logger.debug('socket error', { url }));
  }

  /** The relay greeted this socket: it reached a relay, not just a port. */
  get welcomed(): boolean {
    return this.#welcomed;
  }

  get isOpen(): boolean {
    return this.#handlers !== undefined && this.#socket.readyState === WS_OPEN;
  }

  /** Returns false when the socket is not open; the caller's state is rebuilt on the next open. */
  send(frame: ClientFrame): boolean {
    if (!this.isOpen) return false;
    try {
      this.#socket.send(JSON.stringify(frame));
      return true;
    } catch (error) {
      this.#logger.warn('send failed', { url: this.url, op: frame.op, error });
      return false;
    }
  }

  /** Closes without calling `onClose`: the caller already knows and acts on it. */
  close(code: number, reason: string): void {
    this.#handlers = undefined;
    try {
      this.#socket.close(code, reason);
    } catch (error) {
      this.#logger.warn('socket close failed', { url: this.url, error });
    }
  }

  #onMessage(data: unknown): void {
    if (typeof data !== 'string') {
      this.#dispatch('badFrame', (h) => h.onBadFrame(relayError('frame_binary', 'relay sent a non-text frame')));
      return;
    }
    const parsed = parseServerFrame(data);
    if (!parsed.ok) {
      this.#dispatch('badFrame', (h) => h.onBadFrame(parsed.error));
      return;
    }
    if (parsed.frame.op === 'welcome') this.#welcomed = true;
    this.#dispatch(parsed.frame.op, (h) => h.onFrame(parsed.frame));
  }

  #dispatch(what: string, fn: (handlers: RelaySocketHandlers) => void): void {
    const handlers = this.#handlers;
    if (handlers !== undefined) this.#guard(what, () => fn(handlers));
  }

  /** Nothing thrown while handling a frame may escape into the WebSocket implementation. */
  #guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#logger.error(`handling "${what}" threw`, { url: this.url, error });
    }
  }
}
