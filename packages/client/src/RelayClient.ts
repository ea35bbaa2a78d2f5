import { backoffDelay, relayError } from '@streamgate/protocol';
import type { RelayError, ServerFrame } from '@streamgate/protocol';
import { ChannelRegistry } from './ChannelRegistry.js';
import { resolveBackoff } from './backoff.js';
import type { BackoffOptions, ResolvedBackoff } from './backoff.js';
import { ConnectionManager } from './ConnectionManager.js';
import type { ConnectionStatus } from './ConnectionManager.js';
import { consoleLogger } from './logger.js';
import type { RelayLogger } from './logger.js';
import type { StreamChannel } from './StreamChannel.js';
import { SubscriptionHandle } from './Subscription.js';
import type { Subscriber } from './Subscription.js';
import { checkToken, describeError } from './tokens.js';
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
}

/** One socket to a relay, shared by every subscription, with resume, token refresh and backoff. */
export class RelayClient {
  readonly #backoff: ResolvedBackoff;
  readonly #logger: RelayLogger;
  readonly #onError: ((error: SubscriptionError) => void) | undefined;
  readonly #conn: ConnectionManager;
  readonly #channels: ChannelRegistry;
  /** Every open subscription, including those still waiting for their first token. */
  readonly #subscribers = new Set<Subscriber>();
  #closed = false;
  #nextKey = 0;

  constructor(options: RelayClientOptions) {
    if (options.urls.length === 0) throw new TypeError('RelayClient needs at least one URL');
    // Node 20 has no global WebSocket, whatever the DOM typings claim.
    const WebSocketImpl = options.WebSocket ?? ('WebSocket' in globalThis ? globalThis.WebSocket : undefined);
    if (WebSocketImpl === undefined) throw new TypeError('no WebSocket available: pass options.WebSocket');
    this.#backoff = resolveBackoff(options.backoff);
    this.#logger = options.logger ?? consoleLogger;
    this.#onError = options.onError;
    this.#conn = new ConnectionManager({
      urls: [...options.urls],
      WebSocket: WebSocketImpl,
      backoff: this.#backoff,
      logger: this.#logger,
      healthyAfterMs: options.healthyAfterMs ?? 5_000,
      events: {
        onOpen: () => this.#channels.subscribeAll(),
        onFrame: (frame) => this.#onFrame(frame),
        onBadFrame: (error) => this.#reportConnectionError(error),
        onDisconnected: () => this.#channels.disconnected(),
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
    this.#channels = new ChannelRegistry(this.#conn, this.#backoff, (sub) => this.#subscribers.delete(sub));
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
    sub.tokenTimer = undefined;
    let value: unknown;
    try {
      value = await sub.getToken();
    } catch (error) {
      if (sub.state === 'closed') return;
      sub.report({ code: 'token_fetch_failed', retryable: true, message: describeError(error) });
      const delay = backoffDelay(sub.tokenAttempt++, this.#backoff.baseMs, this.#backoff.maxMs);
      sub.tokenTimer = setTimeout(() => void this.#acquireToken(sub), delay);
      return;
    }
    if (sub.state === 'closed') return;
    const checked = checkToken(value);
    if (!checked.ok) {
      this.#subscribers.delete(sub);
      sub.fail(checked.error);
      return;
    }
    sub.tokenAttempt = 0;
    sub.stream = checked.token.stream;
    this.#channels.attach(sub, checked.token);
  }

  #onFrame(frame: ServerFrame): void {
    switch (frame.op) {
      case 'welcome':
      case 'pong':
        return;
      case 'subscribed': {
        const channel = this.#channels.current(frame.sid);
        if (channel === undefined) return;
        if (frame.stream !== channel.stream) {
          this.#logger.warn('subscribed frame names another stream', { sid: frame.sid, stream: frame.stream });
          return;
        }
        channel.retryAttempt = 0;
        channel.expiresAt = frame.exp * 1000;
        channel.applySubscribed(frame);
        return;
      }
      case 'live':
        this.#channels.current(frame.sid)?.applyLive(frame);
        return;
      case 'event':
        // Routed by stream, not sid: entries still in flight from a replaced relay subscription
        // are real entries, and each subscriber's position filters any it already has.
        this.#channels.get(frame.stream)?.deliver(frame);
        return;
      case 'malformed':
        this.#channels.get(frame.stream)?.skipMalformed(frame);
        return;
      case 'error': {
        const error: RelayError = { code: frame.code, retryable: frame.retryable, message: frame.message };
        const channel = frame.sid === undefined ? undefined : this.#channels.current(frame.sid);
        if (channel === undefined) this.#reportConnectionError(error);
        else if (channel.refreshInFlight) this.#refreshRefused(channel, frame.sid ?? '', error);
        else this.#channels.ended(channel, error);
        return;
      }
      case 'unsubscribed': {
        // Usually after an `error` frame that already ended the channel; alone, it ends it here.
        const channel = frame.reason === 'client' ? undefined : this.#channels.current(frame.sid);
        if (channel !== undefined && frame.reason !== 'client') {
          this.#channels.ended(channel, relayError(frame.reason, 'the relay ended the subscription'));
        }
        return;
      }
      case 'refresh_token': {
        const channel = this.#channels.current(frame.sid);
        if (channel !== undefined) void this.#refresh(channel, frame.sid);
        return;
      }
      case 'refreshed': {
        const channel = this.#channels.current(frame.sid);
        if (channel === undefined) return;
        channel.expiresAt = frame.exp * 1000;
        channel.refreshInFlight = false;
        channel.refreshAttempt = 0;
        return;
      }
      case 'reconnect':
        for (const p of frame.positions) this.#channels.get(p.stream)?.adoptPosition(p.id);
        this.#conn.drain();
        return;
    }
  }

  /** Answers `refresh_token` with one `refresh`; further notices wait until `refreshed`. */
  async #refresh(channel: StreamChannel, sid: string): Promise<void> {
    if (channel.refreshInFlight) return;
    const fetch = channel.fetchToken();
    if (fetch === undefined) return;
    channel.refreshInFlight = true;
    let value: unknown;
    try {
      value = await fetch;
    } catch (error) {
      this.#refreshRefused(channel, sid, { code: 'token_fetch_failed', retryable: true, message: describeError(error) });
      return;
    }
    const checked = checkToken(value, channel.stream);
    if (!checked.ok) {
      channel.refreshInFlight = false;
      channel.report(checked.error);
      return;
    }
    // Kept even if the socket changed meanwhile: the resubscribe then uses it.
    channel.token = checked.token.token;
    channel.expiresAt = checked.token.expiresAt;
    const stillCurrent = this.#channels.current(sid) === channel;
    if (!stillCurrent || !this.#conn.send({ op: 'refresh', sid, token: channel.token })) {
      channel.refreshInFlight = false;
    }
  }

  /**
   * Retries a refresh that failed, with backoff. A relay refuses a refresh with an `error` frame and keeps the subscription until the old
   * token expires (then it ends it with `unsubscribed`), so this is not the end of the channel.
   */
  #refreshRefused(channel: StreamChannel, sid: string, error: SubscriptionError): void {
    channel.refreshInFlight = false;
    channel.report(error);
    if (!error.retryable) return;
    if (channel.refreshTimer !== undefined) clearTimeout(channel.refreshTimer);
    channel.refreshTimer = setTimeout(
      () => {
        channel.refreshTimer = undefined;
        if (this.#channels.current(sid) === channel) void this.#refresh(channel, sid);
      },
      backoffDelay(channel.refreshAttempt++, this.#backoff.baseMs, this.#backoff.maxMs),
    );
  }

  #reportConnectionError(error: SubscriptionError): void {
    this.#logger.warn('relay connection error', { ...error });
    try {
      this.#onError?.(error);
    } catch (thrown) {
      this.#logger.error('onError callback threw', { error: thrown });
    }
  }

  #detach(sub: Subscriber): void {
    this.#subscribers.delete(sub);
    if (sub.tokenTimer !== undefined) clearTimeout(sub.tokenTimer);
    this.#channels.detach(sub);
  }

  #failAll(error: ClientError | undefined): void {
    this.#channels.clear();
    for (const sub of this.#subscribers) {
      if (sub.tokenTimer !== undefined) clearTimeout(sub.tokenTimer);
      sub.fail(error);
    }
    this.#subscribers.clear();
  }
}
