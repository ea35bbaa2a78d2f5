import { tokenRefreshDelayMs } from '@streamgate/protocol';
import type { RefreshFrame, RelaySubscription, StreamName } from '@streamgate/protocol';
import { RetryTimer } from './RetryTimer.js';
import { checkToken, expiresSoon, TOKEN_RENEW_MARGIN_MS, tokenFetchError } from './tokens.js';
import type { ClientError, SubscriptionError } from './types.js';
import type { RequestDeadline } from './RequestDeadline.js';

/** Mints a token for the stream: the `getToken` of one of its open subscriptions. */
export type TokenSource = () => Promise<unknown>;

export type TokenRenewal = { ok: true } | { ok: false; error: ClientError };

/** What a refresh in place needs from the socket and the subscription it refreshes. */
export interface RefreshContext {
  /** True while `sid` is still the relay subscription in force for this token's stream. */
  isCurrent(sid: string): boolean;
  send(frame: RefreshFrame): boolean;
  report(error: SubscriptionError): void;
  /** Delay before refresh retry number `attempt` (0-based). */
  retryDelay(attempt: number): number;
  /** How long a `refresh` may go unanswered before it is sent again (none: wait for ever). */
  deadline?: RequestDeadline;
}

/**
 * The token a stream's relay subscription uses, and every way it is renewed: before a
 * (re)subscribe when it is due, and in place when the relay asks with `refresh_token`. All
 * renewals share one `getToken()` call in flight.
 *
 * When a token is due follows the protocol's `tokenRefreshDelayMs`, as the relay's notices do:
 * a moment drawn once per token, uniformly over the last third of its life closing
 * `TOKEN_RENEW_MARGIN_MS` before expiry, so clients whose tokens were minted in one burst do
 * not come back to the backend in one burst when they reconnect.
 */
export class StreamToken {
  readonly #stream: StreamName;
  readonly #source: () => TokenSource | undefined;
  readonly #random: () => number;
  #token: string;
  /** Milliseconds since the epoch. */
  #expiresAt: number;
  /**
   * When the client got the token, standing in for its `iat`: the client does not decode
   * tokens, and a backend may hand out one it minted earlier.
   */
  #receivedAt: number;
  /** The token's place in its renewal window, in [0, 1]: drawn once, so resubscribes do not redraw it. */
  #draw: number;
  /**
   * It came with `TOKEN_RENEW_MARGIN_MS` or less to live: a backend that mints tokens this short
   * hands out no longer one, so asking again before using it would only ask twice.
   */
  #cameShort: boolean;
  #fetch: Promise<unknown> | undefined;
  /** Set from a `refresh_token` frame until `refreshed`, an error or a disconnect. */
  #refreshInFlight = false;
  readonly #refreshRetry = new RetryTimer();
  #cancelRefreshDeadline: (() => void) | undefined;

  constructor(initial: RelaySubscription<unknown>, source: () => TokenSource | undefined, random: () => number = Math.random) {
    this.#stream = initial.stream;
    this.#source = source;
    this.#random = random;
    this.#token = initial.token;
    this.#expiresAt = initial.expiresAt;
    this.#receivedAt = Date.now();
    this.#draw = random();
    this.#cameShort = expiresSoon(initial.expiresAt, this.#receivedAt);
  }

  get value(): string {
    return this.#token;
  }

  /** Milliseconds since the epoch. */
  get expiresAt(): number {
    return this.#expiresAt;
  }

  /** A refresh in place was started and has not been answered yet. */
  get refreshing(): boolean {
    return this.#refreshInFlight;
  }

  /** A joining subscription brought its own token: the one that lives longer is kept. */
  offer(token: RelaySubscription<unknown>): void {
    if (token.expiresAt > this.#expiresAt) this.#adopt(token);
  }

  /** The relay's word on the expiry of the token in force (`subscribed`), in JWT seconds. */
  confirmExpiry(expSeconds: number): void {
    this.#expiresAt = expSeconds * 1000;
  }

  /** Milliseconds since the epoch from which a (re)subscribe renews the token first. */
  get renewAt(): number {
    const iatMs = this.#receivedAt;
    const lifetime = {
      iatSeconds: iatMs / 1000,
      expSeconds: this.#expiresAt / 1000,
      leadSeconds: TOKEN_RENEW_MARGIN_MS / 1000,
    };
    return iatMs + tokenRefreshDelayMs(lifetime, iatMs, () => this.#draw);
  }

  /**
   * Whether the token should be renewed before it is used to (re)subscribe: its renewal moment
   * has come, or it came with more than `TOKEN_RENEW_MARGIN_MS` to live and now has less (the
   * relay would ask for a new one at once). One that came that short is used as it came.
   */
  renewalDue(now: number = Date.now()): boolean {
    return now >= this.renewAt || (!this.#cameShort && expiresSoon(this.#expiresAt, now));
  }

  /**
   * Gets a new token (joining the `getToken()` call in flight, if any) and adopts it when it is
   * valid for this stream. Undefined when no subscription is left to ask.
   */
  renew(): Promise<TokenRenewal> | undefined {
    const fetch = this.#fetchShared();
    if (fetch === undefined) return undefined;
    return fetch.then(
      (value): TokenRenewal => {
        const checked = checkToken(value, this.#stream);
        if (!checked.ok) return checked;
        this.#adopt(checked.token);
        return { ok: true };
      },
      (error: unknown): TokenRenewal => ({ ok: false, error: tokenFetchError(error) }),
    );
  }

  /** Answers `refresh_token` for `sid` with one `refresh`; further notices wait until `refreshed`. */
  async refreshInPlace(sid: string, ctx: RefreshContext): Promise<void> {
    if (this.#refreshInFlight) return;
    const renewal = this.renew();
    if (renewal === undefined) return;
    this.#refreshInFlight = true;
    const outcome = await renewal;
    if (!outcome.ok) {
      this.refused(sid, outcome.error, ctx);
      return;
    }
    // The new token is kept even if the socket changed meanwhile: the resubscribe then uses it.
    if (!ctx.isCurrent(sid) || !ctx.send({ op: 'refresh', sid, token: this.#token })) {
      this.#refreshInFlight = false;
      return;
    }
    const deadline = ctx.deadline;
    if (deadline === undefined) return;
    this.#clearRefreshDeadline();
    // An unanswered refresh would otherwise block every later one until the token ran out.
    this.#cancelRefreshDeadline = deadline.clock.after(deadline.timeoutMs, () => {
      this.#cancelRefreshDeadline = undefined;
      if (!this.#refreshInFlight) return;
      this.refused(
        sid,
        {
          code: 'request_timeout',
          retryable: true,
          message: `refresh of ${sid} unanswered for ${deadline.timeoutMs} ms; sending it again`,
        },
        ctx,
      );
    });
  }

  #clearRefreshDeadline(): void {
    this.#cancelRefreshDeadline?.();
    this.#cancelRefreshDeadline = undefined;
  }

  /**
   * The refresh for `sid` failed: retried with backoff when the error allows. A relay refuses a
   * refresh with an `error` frame and keeps the subscription until the old token expires (then it
   * ends it with `unsubscribed`), so this is not the end of the subscription.
   */
  refused(sid: string, error: SubscriptionError, ctx: RefreshContext): void {
    this.#refreshInFlight = false;
    this.#clearRefreshDeadline();
    ctx.report(error);
    if (!error.retryable) return;
    this.#refreshRetry.schedule(
      (attempt) => ctx.retryDelay(attempt),
      () => {
        if (ctx.isCurrent(sid)) void this.refreshInPlace(sid, ctx);
      },
    );
  }

  /** The relay accepted the refresh (`refreshed`); `expSeconds` is the new token's expiry. */
  refreshed(expSeconds: number): void {
    this.#expiresAt = expSeconds * 1000;
    this.#refreshInFlight = false;
    this.#clearRefreshDeadline();
    this.#refreshRetry.resetAttempts();
  }

  /** The relay subscription being refreshed is gone (socket lost, subscription ended). */
  abandonRefresh(): void {
    this.#refreshInFlight = false;
    this.#clearRefreshDeadline();
  }

  cancelRefreshRetry(): void {
    this.#clearRefreshDeadline();
    this.#refreshRetry.cancel();
  }

  #adopt(token: RelaySubscription<unknown>): void {
    this.#token = token.token;
    this.#expiresAt = token.expiresAt;
    this.#receivedAt = Date.now();
    this.#draw = this.#random();
    this.#cameShort = expiresSoon(token.expiresAt, this.#receivedAt);
  }

  /**
   * A refresh asked for on one socket and a resubscribe on the next share one call: one backend
   * request per renewal, however the connection churns while it runs.
   */
  #fetchShared(): Promise<unknown> | undefined {
    if (this.#fetch !== undefined) return this.#fetch;
    const source = this.#source();
    if (source === undefined) return undefined;
    const fetch = Promise.resolve().then(source);
    this.#fetch = fetch;
    const settle = (): void => {
      if (this.#fetch === fetch) this.#fetch = undefined;
    };
    fetch.then(settle, settle);
    return fetch;
  }
}
