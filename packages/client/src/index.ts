export { RelayClient } from './RelayClient.js';
export type { RelayClientOptions } from './RelayClient.js';
export type { ConnectionStatus } from './ReconnectingSocket.js';
export { DEFAULT_BACKOFF } from './backoff.js';
export type { BackoffOptions, ResolvedBackoff } from './backoff.js';
export { consoleLogger } from './logger.js';
export type { LogFields, RelayLogger } from './logger.js';
export { TOKEN_RENEW_MARGIN_MS } from './tokens.js';
export type {
  ClientError,
  ClientErrorCode,
  EventMeta,
  RecoveryInfo,
  ResetInfo,
  SubscribeOptions,
  Subscription,
  SubscriptionError,
  SubscriptionState,
} from './types.js';
export type { WebSocketConstructor, WebSocketLike } from './webSocketLike.js';
// The client's name for the one `Clock` (`RelayClientOptions.clock`), kept for code that imports it.
export type { Clock as ClientClock } from '@streamgate/protocol';
export { DEFAULT_LIVENESS_GRACE_MS, DEFAULT_PING_INTERVAL_MS } from './LivenessWatch.js';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './RelayClient.js';
