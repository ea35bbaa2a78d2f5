/**
 * WebSocket close codes the relay uses. The range says what a client does next:
 *
 * - 4000–4099: reconnect and resume every subscription from its last id. The code says how soon.
 * - 4400–4499: do not reconnect on your own; something must change first (client bug, policy).
 *
 * 1000 (normal) and 1001 (going away) keep their standard meaning; a client treats 1001 and
 * abnormal closures (1005, 1006) as "reconnect with backoff".
 */
export const CloseCode = {
  /** Drain notice followed by close: reconnect now, without backoff; the server already spread the load. */
  drainReconnect: 4000,
  /** The client's send buffer passed its limit; reconnect and resume from the last id. */
  slowConsumer: 4001,
  /** This pod is draining and takes no new connections: reconnect now, to another pod if possible. */
  tryAnotherPod: 4002,
  /** The pod holds its maximum of connections: reconnect with backoff, preferably elsewhere. */
  overloaded: 4003,
  /** Too many new connections per second on this pod: reconnect with backoff. */
  connectionRateLimited: 4004,
  /** An unexpected server fault: reconnect with backoff. */
  internalError: 4005,
  /**
   * No frame arrived for a whole ping interval after a `ping` (the socket is half-open, or the
   * client stopped reading): reconnect with backoff, preferably elsewhere. A client that closes a
   * socket it heard nothing on uses this code too.
   */
  pingTimeout: 4006,
  /** The client kept sending frames the protocol forbids; fix the client. */
  protocolViolation: 4400,
  /** The client asked for a protocol version the relay does not speak. */
  unsupportedProtocol: 4401,
} as const;

export type CloseCodeName = keyof typeof CloseCode;
export type CloseCodeValue = (typeof CloseCode)[CloseCodeName];

export type ReconnectAdvice =
  | { reconnect: true; backoff: false; preferOtherPod: boolean }
  | { reconnect: true; backoff: true; preferOtherPod: boolean }
  | { reconnect: false };

/** What a client should do after the socket closed with `code`. */
export function reconnectAdvice(code: number): ReconnectAdvice {
  if (code === CloseCode.drainReconnect) return { reconnect: true, backoff: false, preferOtherPod: true };
  if (code === CloseCode.tryAnotherPod) return { reconnect: true, backoff: false, preferOtherPod: true };
  if (code === CloseCode.slowConsumer) return { reconnect: true, backoff: true, preferOtherPod: false };
  if (code === CloseCode.overloaded || code === CloseCode.connectionRateLimited || code === CloseCode.pingTimeout) {
    return { reconnect: true, backoff: true, preferOtherPod: true };
  }
  if (code >= 4400 && code <= 4499) return { reconnect: false };
  // 1000 from the server side means it ended the session on purpose; anything else is a fault.
  if (code === 1000) return { reconnect: false };
  return { reconnect: true, backoff: true, preferOtherPod: false };
}
