/**
 * The part of the WebSocket API the client uses. Both the browser's `WebSocket` and the `ws`
 * package's class satisfy it, so either can be injected without a cast.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** `WebSocket.OPEN` in every implementation; read from the constant so no instance is needed. */
export const WS_OPEN = 1;
