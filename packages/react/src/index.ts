export { RelayProvider, useRelayClient } from './RelayProvider.js';
export type { RelayProviderProps } from './RelayProvider.js';
export { useSubscriptionRelay } from './useSubscriptionRelay.js';
export type { UseReactQuerySubscriptionRelayOptions, UseSubscriptionRelayOptions } from './useSubscriptionRelay.js';
export type { SubscriptionRelayCallbacks, SubscriptionRelayResult } from './useTokenSubscription.js';
export type {
  InferReactQueryInput,
  InferReactQueryPayload,
  InferRelayProcedurePayload,
  ReactQueryTokenProcedure,
  RelayTokenProcedure,
} from './tokenProcedures.js';
export { stableKey } from './stableKey.js';
