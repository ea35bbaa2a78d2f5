import { backoffDelay, relayError } from '@streamgate/protocol';
import type { RelayError, ServerFrame } from '@streamgate/protocol';
import { checkClientOptions, checkSubscribeOptions } from './checkOptions.js';
import { SharedSubscriptionRegistry } from './SharedSubscriptionRegistry.js';
import { resolveBackoff } from './backoff.js';
import type { BackoffOptions, ResolvedBackoff } from './backoff.js';
import { ReconnectingSocket } from './ReconnectingSocket.js';
import type { ConnectionStatus } from './ReconnectingSocket.js';
import { systemClock } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import { DEFAULT_LIVENESS_GRACE_MS } from './LivenessWatch.js';
import { consoleLogger } from './logger.js';
import type { RelayLogger } from './logger.js';
import { SubscriptionHandle } from './SubscriptionHandle.js';
import type { Subscriber } from './SubscriptionHandle.js';
import { checkToken, tokenFetchError } from './tokens.js';
import type { ClientError, SubscribeOptions, Subscription, SubscriptionError } from './types.js';
import type { WebSocketConstructor } from './webSocketLike.js';

export interface RelayClientOptions {
  /** Relay endpoints (`wss://…/v1/ws`); the client moves to the next one when told to change pods. */
  urls: readonly string[];
  /** Defaults to `globalThis.WebSocket`; pass `ws`'s class in Node. */
  WebSocket?: WebSocketConstructor;
  backoff?: BackoffOptions;
  logger?: RelayLogger;
  /** Errors that belong to no subscription: unparseable frames, `error` frames without a sid. */
  onError?: (error: SubscriptionError) => void;
  /** A connection that stayed up this long resets the backoff. Default 5 s. */
  healthyAfterMs?: number;
  /**
   * Draws where in its renewal window each token is renewed (see `TOKEN_RENEW_MARGIN_MS`).
   * Default `Math.random`; tests pass their own.
   */
  random?: () => number;
  /**
   * Liveness and request deadlines (docs/protocol.md §8): a socket silent for the relay's ping
   * interval plus `livenessGraceMs` (default 10 s) is given up and its subscriptions resumed on
   * the next URL; a `subscribe` or `refresh` unanswered for `requestTimeoutMs` (default 15 s) is
   * retried with backoff.
   */
  livenessGraceMs?: number;
  requestTimeoutMs?: number;
  /** Timers for those deadlines; tests pass a fake one. */
  clock?: Clock;
}

/** How long a `subscribe` or `refresh` may go unanswered before it is sent again. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** One socket to a relay, shared by every subscription, with resume, token refresh and backoff. */
export class RelayClient {
  readonly #backoff: ResolvedBackoff;
  readonly #logger: RelayLogger;
  readonly #onError: ((error: SubscriptionError) => void) | undefined;
  readonly #conn: ReconnectingSocket;
  readonly #shared: SharedSubscriptionRegistry;
  /** Every open subscription, including those still waiting for their first token. */
  readonly #subscribers = new Set<Subscriber>();
  #closed = false;
  #nextKey = 0;

  constructor(options: RelayClientOptions) {
    checkClientOptions(options);
    if (options.urls.length === 0) throw new TypeError('RelayClient needs at least one URL');
    // Node 20 has no global WebSocket, whatever the DOM typings claim.
    const WebSocketImpl = options.WebSocket ?? ('WebSocket' in globalThis ? globalThis.WebSocket : undefined);
    if (WebSocketImpl === undefined) throw new TypeError('no WebSocket available: pass options.WebSocket');
    this.#backoff = resolveBackoff(options.backoff);
    this.#logger = options.logger ?? consoleLogger;
    this.#onError = options.onError;
    const clock = options.clock ?? systemClock;
    this.#conn = new ReconnectingSocket({
      urls: [...options.urls],
      WebSocket: WebSocketImpl,
      backoff: this.#backoff,
      logger: this.#logger,
      healthyAfterMs: options.healthyAfterMs ?? 5_000,
      clock,
      livenessGraceMs: options.livenessGraceMs ?? DEFAULT_LIVENESS_GRACE_MS,
      events: {
        onOpen: () => this.#shared.subscribeAll(),
        onFrame: (frame) => this.#onFrame(frame),
        onBadFrame: (error) => this.#reportConnectionError(error),
        onDisconnected: (halting) => this.#shared.disconnected(halting),
        onHalted: (code, reason) => {
          const suffix = reason === '' ? '' : `: ${reason}`;
          this.#failAll({
            code: 'connection_closed',
            retryable: false,
            message: `relay closed the connection with ${code}${suffix}; not reconnecting`,
          });
        },
      },
    });
    this.#shared = new SharedSubscriptionRegistry(this.#conn, this.#backoff, (sub) => this.#subscribers.delete(sub), options.random, {
      clock,
      timeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
  }

  get status(): ConnectionStatus {
    return this.#conn.status;
  }

  /** The URL of the current or next connection. */
  get url(): string {
    return this.#conn.url;
  }

  /**
   * Subscribes to the stream named by the token `getToken()` returns; `T` is that token's
   * payload type. Two subscriptions to one stream share one relay subscription.
   */
  subscribe<T>(options: SubscribeOptions<T>): Subscription<T> {
    if (this.#closed) throw new Error('RelayClient is closed');
    checkSubscribeOptions(options);
    const handle = new SubscriptionHandle<T>(++this.#nextKey, options, this.#logger, (s) => this.#detach(s));
    this.#subscribers.add(handle);
    this.#conn.ensure();
    void this.#acquireToken(handle);
    return handle;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#failAll(undefined);
    this.#conn.close();
  }

  async #acquireToken(sub: Subscriber): Promise<void> {
    let value: unknown;
    try {
      value = await sub.getToken();
    } catch (error) {
      if (sub.state === 'closed') return;
      const failure = tokenFetchError(error);
      if (!failure.retryable) return this.#endUnstarted(sub, failure);
      sub.report(failure);
      sub.retryTokenLater(
        (attempt) => backoffDelay(attempt, this.#backoff.baseMs, this.#backoff.maxMs),
        () => void this.#acquireToken(sub),
      );
      return;
    }
    if (sub.state === 'closed') return;
    const checked = checkToken(value);
    if (!checked.ok) return this.#endUnstarted(sub, checked.error);
    sub.bindStream(checked.token.stream);
    this.#shared.attach(sub, checked.token);
  }

  #onFrame(frame: ServerFrame): void {
    switch (frame.op) {
      case 'welcome':
      case 'pong':
      case 'ping':
        return;
      case 'subscribed': {
        const shared = this.#shared.current(frame.sid);
        if (shared === undefined) return;
        if (frame.stream !== shared.stream) {
          this.#logger.warn('subscribed frame names another stream', { sid: frame.sid, stream: frame.stream });
          return;
        }
        shared.applySubscribed(frame);
        return;
      }
      case 'live':
        this.#shared.current(frame.sid)?.applyLive(frame);
        return;
      case 'event':
        // Routed by stream, not sid: entries still in flight from a replaced relay subscription
        // are real entries, and each subscriber's position filters any it already has.
        this.#shared.get(frame.stream)?.deliver(frame);
        return;
      case 'malformed':
        this.#shared.get(frame.stream)?.skipMalformed(frame);
        return;
      case 'stream_reset':
        // By stream, like events: the entries of the new incarnation that follow it are.
        this.#shared.get(frame.stream)?.applyReset(frame);
        return;
      case 'error': {
        const error: RelayError = { code: frame.code, retryable: frame.retryable, message: frame.message };
        if (frame.sid !== undefined && this.#shared.failed(frame.sid, error)) return;
        // The answer to withdrawing a sid this client has already let go (docs/protocol.md §8): expected, not a fault.
        if (frame.sid !== undefined && frame.code === 'unknown_subscription') return;
        this.#reportConnectionError(error);
        return;
      }
      case 'unsubscribed': {
        // Usually after an `error` frame that already ended the shared subscription; alone, it ends it here.
        const shared = frame.reason === 'client' ? undefined : this.#shared.current(frame.sid);
        if (shared !== undefined && frame.reason !== 'client') {
          this.#shared.ended(shared, relayError(frame.reason, 'the relay ended the subscription'));
        }
        return;
      }
      case 'refresh_token':
        this.#shared.refreshRequested(frame.sid);
        return;
      case 'refreshed':
        this.#shared.current(frame.sid)?.token.refreshed(frame.exp);
        return;
      case 'reconnect':
        for (const p of frame.positions) this.#shared.get(p.stream)?.adoptPosition(p.id);
        this.#conn.drain();
        return;
    }
  }

  #reportConnectionError(error: SubscriptionError): void {
    this.#logger.warn('relay connection error', { ...error });
    try {
      this.#onError?.(error);
    } catch (thrown) {
      this.#logger.error('onError callback threw', { error: thrown });
    }
  }

  /** Ends a subscription that never reached the registry: no token can be had for it. */
  #endUnstarted(sub: Subscriber, error: ClientError): void {
    this.#subscribers.delete(sub);
    sub.fail(error);
  }

  #detach(sub: Subscriber): void {
    this.#subscribers.delete(sub);
    sub.cancelTokenRetry();
    this.#shared.detach(sub);
  }

  #failAll(error: ClientError | undefined): void {
    this.#shared.clear();
    for (const sub of this.#subscribers) {
      sub.cancelTokenRetry();
      sub.fail(error);
    }
    this.#subscribers.clear();
  }
}
