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
export type { ClientClock } from './Clock.js';
export { DEFAULT_LIVENESS_GRACE_MS, DEFAULT_PING_INTERVAL_MS } from './LivenessWatch.js';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './RelayClient.js';
