import { compareStreamIds } from '@streamgate/protocol';
import type { RelaySubscription, StreamId, StreamName } from '@streamgate/protocol';
import type { RelayLogger } from './logger.js';
import { RetryTimer } from './RetryTimer.js';
import type { EventMeta, RecoveryInfo, ResetInfo, SubscribeOptions, Subscription, SubscriptionError, SubscriptionState } from './types.js';

/**
 * What the client and a shared subscription need from one app subscription, without its payload
 * type: subscribers of different `T` can share one relay subscription, and `T` only matters at `onEvent`.
 */
export interface Subscriber {
  readonly key: number;
  readonly state: SubscriptionState;
  readonly position: StreamId | undefined;
  readonly from: StreamId | undefined;
  readonly stream: StreamName | undefined;
  getToken(): Promise<RelaySubscription<unknown>>;
  /** The first token arrived and named `stream`; token retries start over from attempt 0. */
  bindStream(stream: StreamName): void;
  /** Calls `retry` after the backoff `delayFor` gives for this token attempt. */
  retryTokenLater(delayFor: (attempt: number) => number, retry: () => void): void;
  cancelTokenRetry(): void;
  setState(state: SubscriptionState): void;
  setPosition(position: StreamId): void;
  deliver(data: unknown, meta: EventMeta): void;
  skipMalformed(meta: EventMeta, reason: string): void;
  recover(info: RecoveryInfo): void;
  /** The stream was recreated: the position becomes `position`, so lower ids are accepted. */
  reset(stream: StreamName, position: StreamId): void;
  report(error: SubscriptionError): void;
  fail(error: SubscriptionError | undefined): void;
}

export class SubscriptionHandle<T> implements Subscription<T>, Subscriber {
  readonly key: number;
  readonly from: StreamId | undefined;
  #stream: StreamName | undefined;
  readonly #tokenRetry = new RetryTimer();
  #state: SubscriptionState = 'connecting';
  #position: StreamId | undefined;
  #error: SubscriptionError | undefined;
  #duplicates = 0;
  readonly #options: SubscribeOptions<T>;
  readonly #logger: RelayLogger;
  readonly #onUnsubscribe: (subscriber: Subscriber) => void;

  constructor(key: number, options: SubscribeOptions<T>, logger: RelayLogger, onUnsubscribe: (subscriber: Subscriber) => void) {
    this.key = key;
    this.from = options.from;
    this.#position = options.from;
    this.#options = options;
    this.#logger = logger;
    this.#onUnsubscribe = onUnsubscribe;
  }

  get stream(): StreamName | undefined {
    return this.#stream;
  }
  get state(): SubscriptionState {
    return this.#state;
  }
  get position(): StreamId | undefined {
    return this.#position;
  }
  get error(): SubscriptionError | undefined {
    return this.#error;
  }
  get duplicatesIgnored(): number {
    return this.#duplicates;
  }

  unsubscribe(): void {
    if (this.#state === 'closed') return;
    this.setState('closed');
    this.#onUnsubscribe(this);
  }

  getToken(): Promise<RelaySubscription<unknown>> {
    return this.#options.getToken();
  }

  bindStream(stream: StreamName): void {
    this.#tokenRetry.resetAttempts();
    this.#stream = stream;
  }

  retryTokenLater(delayFor: (attempt: number) => number, retry: () => void): void {
    this.#tokenRetry.schedule(delayFor, retry);
  }

  cancelTokenRetry(): void {
    this.#tokenRetry.cancel();
  }

  setState(state: SubscriptionState): void {
    const previous = this.#state;
    // `closed` is terminal: late frames from the relay must not revive a subscription.
    if (previous === state || previous === 'closed') return;
    this.#state = state;
    this.#call('onStateChange', () => this.#options.onStateChange?.(state, previous));
  }

  /** Moves the position without delivering; used where the relay dictates the new position. */
  setPosition(position: StreamId): void {
    this.#position = position;
  }

  deliver(data: unknown, meta: EventMeta): void {
    if (!this.#advance(meta.id)) return;
    // The relay verified the token that named this stream, and the token's type names the
    // payload type: this is the one place the phantom type meets the wire.
    const payload = data as T;
    this.#call('onEvent', () => this.#options.onEvent(payload, meta));
  }

  skipMalformed(meta: EventMeta, reason: string): void {
    if (!this.#advance(meta.id)) return;
    this.report({ code: 'malformed_entry', retryable: false, message: reason, id: meta.id });
  }

  recover(info: RecoveryInfo): void {
    this.#position = info.position;
    this.setState('unrecovered');
    this.#call('onRecovery', () => this.#options.onRecovery?.(info));
  }

  reset(stream: StreamName, position: StreamId): void {
    if (this.#state === 'closed') return;
    const info: ResetInfo = { stream, previousPosition: this.#position, position };
    this.#position = position;
    this.#call('onReset', () => this.#options.onReset?.(info));
  }

  report(error: SubscriptionError): void {
    if (this.#state === 'closed') return;
    if (this.#options.onError === undefined) {
      this.#logger.warn('subscription error', { stream: this.#stream, ...error });
      return;
    }
    this.#call('onError', () => this.#options.onError?.(error));
  }

  /** Ends the subscription from the client's side; `error` says why, if it was not a plain close. */
  fail(error: SubscriptionError | undefined): void {
    if (this.#state === 'closed') return;
    if (error !== undefined) {
      this.#error = error;
      this.report(error);
    }
    this.setState('closed');
  }

  /** Returns false (and counts) when `id` is not after the position: a duplicate at a resume seam. */
  #advance(id: StreamId): boolean {
    if (this.#state === 'closed') return false;
    if (this.#position !== undefined && compareStreamIds(id, this.#position) <= 0) {
      this.#duplicates += 1;
      return false;
    }
    this.#position = id;
    return true;
  }

  /** App callbacks run inside socket handlers; a throw there must not break delivery to others. */
  #call(name: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#logger.error(`${name} callback threw`, { stream: this.#stream, error });
    }
  }
}
