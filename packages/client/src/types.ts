import type { RelayError, RelaySubscription, StreamId, StreamName } from '@streamgate/protocol';

/**
 * - `connecting`: waiting for a token, a socket, or the relay's `subscribed` answer.
 * - `catching-up`: the relay resumed from a position and is replaying what was missed.
 * - `live`: replay is over; events arrive as they are written.
 * - `unrecovered`: the relay could not resume without a gap (`truncated` or `reset`); delivery
 *   goes on from the relay's new position and the state becomes `live` at the `live` frame.
 * - `closed`: unsubscribed, the client closed, or a non-retryable error (see `error`).
 */
export type SubscriptionState = 'connecting' | 'catching-up' | 'live' | 'unrecovered' | 'closed';

export interface EventMeta {
  id: StreamId;
  stream: StreamName;
}

/** Errors that originate in the client rather than in a relay `error` frame. */
export type ClientErrorCode =
  /** `getToken()` rejected; retried with backoff. */
  | 'token_fetch_failed'
  /** `getToken()` resolved to something that is not a relay subscription, or for another stream. */
  | 'token_response_invalid'
  /** The relay closed the socket with a code that forbids reconnecting (44xx, 1000). */
  | 'connection_closed'
  /** An entry on the stream was not in the entry format; its id still advanced the position. */
  | 'malformed_entry'
  /** A `subscribe` or `refresh` went unanswered past `requestTimeoutMs`; it is sent again with backoff. */
  | 'request_timeout';

export interface ClientError {
  code: ClientErrorCode;
  retryable: boolean;
  message: string;
  /** The entry id, for `malformed_entry`. */
  id?: StreamId;
}

export type SubscriptionError = RelayError | ClientError;

export interface RecoveryInfo {
  recovery: 'truncated' | 'reset';
  /** The position this subscription held before the gap. */
  previousPosition: StreamId | undefined;
  /** The position delivery continues after. */
  position: StreamId;
  stream: StreamName;
}

/** The stream's key was deleted and recreated while this subscription was receiving it. */
export interface ResetInfo {
  stream: StreamName;
  /** The position this subscription held in the old incarnation. */
  previousPosition: StreamId | undefined;
  /** The position delivery continues after (the start of the new incarnation). */
  position: StreamId;
}

export interface SubscribeOptions<T> {
  /** Mints a token for the stream; called at start, on refresh, and before a resume when the cached token is near expiry. */
  getToken: () => Promise<RelaySubscription<T>>;
  /** Resume after this id; without it delivery starts with the next entry written. */
  from?: StreamId;
  onEvent: (data: T, meta: EventMeta) => void;
  onStateChange?: (state: SubscriptionState, previous: SubscriptionState) => void;
  onError?: (error: SubscriptionError) => void;
  /**
   * The relay could not resume without a gap. Called before any event after the gap, so the app
   * can reload its state (e.g. refetch a snapshot) and then apply the events that follow.
   */
  onRecovery?: (info: RecoveryInfo) => void;
  /**
   * The stream was recreated while subscribed (`stream_reset`): `position` moved back to the start
   * of the new incarnation, whose entries follow, each once, in order (their ids may be lower than
   * those seen before). Called before the first of them, so the app can drop what it built from
   * the old incarnation.
   */
  onReset?: (info: ResetInfo) => void;
}

export interface Subscription<T> {
  readonly state: SubscriptionState;
  /** Last id delivered (or skipped as malformed); the resume point after a reconnect. */
  readonly position: StreamId | undefined;
  /** Known once the first token arrived. */
  readonly stream: StreamName | undefined;
  /** The error that closed the subscription, if any. */
  readonly error: SubscriptionError | undefined;
  /** Events dropped because their id was not after `position` (duplicates at a resume seam). */
  readonly duplicatesIgnored: number;
  unsubscribe(): void;
  /** Type-level only: the payload type, so helpers can infer it from a handle. */
  readonly __payload?: T;
}
