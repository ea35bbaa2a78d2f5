import { useQueryClient } from '@tanstack/react-query';
import type { QueryFunctionContext, QueryKey } from '@tanstack/react-query';
import type { RelaySubscription } from '@streamgate/protocol';
import { stableKey } from './stableKey.js';
import { useTokenSubscription } from './useTokenSubscription.js';
import type { SubscriptionRelayCallbacks, SubscriptionRelayResult } from './useTokenSubscription.js';

/**
 * A procedure of the `useTRPC()` proxy from `@trpc/tanstack-react-query`: its `~types` name the
 * input and output, and `queryOptions(input)` gives the key and fetch the hook runs.
 */
export interface TanstackTokenProcedure<TInput, TPayload> {
  '~types': { input: TInput; output: RelaySubscription<TPayload> };
  queryOptions(input: TInput): {
    queryKey: QueryKey;
    queryFn?(context: QueryFunctionContext): RelaySubscription<TPayload> | Promise<RelaySubscription<TPayload>>;
  };
}

export interface UseTanstackSubscriptionRelayOptions<TInput, TPayload> extends SubscriptionRelayCallbacks<TPayload> {
  /** `useTRPC().demo.token`: the hook calls its `queryOptions(input)`. */
  queryOptions: TanstackTokenProcedure<TInput, TPayload>;
  /** Compared by a stable JSON key: a structurally different input resubscribes. */
  input: NoInfer<TInput>;
}

/**
 * `useSubscriptionRelay` for `@trpc/tanstack-react-query`: tokens are fetched through the
 * QueryClient of the surrounding `QueryClientProvider`.
 */
export function useSubscriptionRelay<TInput, TPayload>(
  options: UseTanstackSubscriptionRelayOptions<TInput, TPayload>,
): SubscriptionRelayResult {
  const queryClient = useQueryClient();
  const { queryOptions, input } = options;
  return useTokenSubscription(
    // A token is a credential with an expiry: never answered from the cache (whatever the
    // client's default staleTime), and dropped from it as soon as it is fetched.
    () => queryClient.fetchQuery({ ...queryOptions.queryOptions(input), staleTime: 0, gcTime: 0 }),
    stableKey(input),
    options,
  );
}
