export { RelayProvider, useRelayClient } from './RelayProvider.js';
export type { RelayProviderProps } from './RelayProvider.js';
export { useSubscriptionRelay } from './useSubscriptionRelay.js';
export type {
  InferRelayProcedurePayload,
  RelayTokenProcedure,
  SubscriptionRelayResult,
  UseSubscriptionRelayOptions,
} from './useSubscriptionRelay.js';
export { stableKey } from './stableKey.js';
