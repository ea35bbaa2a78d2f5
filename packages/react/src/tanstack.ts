// The `@streamgate/react/tanstack` entry: the one module that imports `@tanstack/react-query`,
// so apps on the vanilla client need not install it.
export { useSubscriptionRelay } from './useTanstackSubscriptionRelay.js';
export type { TanstackTokenProcedure, UseTanstackSubscriptionRelayOptions } from './useTanstackSubscriptionRelay.js';
export { RelayProvider, useRelayClient } from './RelayProvider.js';
export type { RelayProviderProps } from './RelayProvider.js';
export type { SubscriptionRelayCallbacks, SubscriptionRelayResult } from './useTokenSubscription.js';
