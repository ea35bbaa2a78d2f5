import { stableKey } from './stableKey.js';
import type {
  InferReactQueryInput,
  InferReactQueryPayload,
  ReactQueryOutput,
  ReactQueryTokenProcedure,
  RelayTokenProcedure,
} from './tokenProcedures.js';
import type { RelaySubscription } from '@streamgate/protocol';
import { useTokenSubscription } from './useTokenSubscription.js';
import type { SubscriptionRelayCallbacks, SubscriptionRelayResult } from './useTokenSubscription.js';

/** Options with a vanilla tRPC client procedure: the hook calls `query.query(input)`. */
export interface UseSubscriptionRelayOptions<TInput, TPayload> extends SubscriptionRelayCallbacks<TPayload> {
  query: RelayTokenProcedure<TInput, TPayload>;
  /** Compared by a stable JSON key: a structurally different input resubscribes. */
  input: NoInfer<TInput>;
}

/** Options with a classic `@trpc/react-query` procedure: the hook calls `useQuery.useQuery(input)`. */
export interface UseReactQuerySubscriptionRelayOptions<P> extends SubscriptionRelayCallbacks<InferReactQueryPayload<P>> {
  useQuery: P;
  /** Compared by a stable JSON key: a structurally different input resubscribes. */
  input: InferReactQueryInput<P>;
}

type ProcedureInput<P> = P extends RelayTokenProcedure<infer I, unknown> ? I : InferReactQueryInput<P>;
type ProcedurePayload<P> = P extends RelayTokenProcedure<never, infer T> ? T : InferReactQueryPayload<P>;
type RelayOptionsFor<P, TInput, TPayload> = SubscriptionRelayCallbacks<TPayload> & { input: TInput } & (
    | { query: P & RelayTokenProcedure<TInput, TPayload>; useQuery?: never }
    | {
        // A procedure whose output is no relay token is refused here, where the mistake is.
        useQuery: ReactQueryOutput<P> extends RelaySubscription<unknown> ? P & ReactQueryTokenProcedure<TInput, TPayload> : never;
        query?: never;
      }
  );

/**
 * Subscribes to the relay stream whose token the procedure mints for `input`, for as long as the
 * component is mounted and `enabled`. Every event re-renders with the new `position`. The key
 * that holds the procedure says which tRPC integration it comes from, and must stay the same for
 * the component's lifetime (a classic procedure's `useQuery` is a hook this hook calls).
 */
export function useSubscriptionRelay<
  P extends RelayTokenProcedure<never, unknown> | ReactQueryTokenProcedure<never, unknown>,
  TInput = ProcedureInput<P>,
  TPayload = ProcedurePayload<P>,
>(options: RelayOptionsFor<P, TInput, TPayload>): SubscriptionRelayResult;
export function useSubscriptionRelay<TInput, TPayload>(
  options:
    | UseSubscriptionRelayOptions<TInput, TPayload>
    | (SubscriptionRelayCallbacks<TPayload> & { useQuery: ReactQueryTokenProcedure<TInput, TPayload>; input: TInput }),
): SubscriptionRelayResult {
  const inputKey = stableKey(options.input);
  if ('query' in options) {
    const { query, input } = options;
    return useTokenSubscription(() => query.query(input), inputKey, options);
  }
  // Disabled: the query only lends its cache entry and fetch; `refetch` runs it when the relay
  // needs a token, joining a fetch in flight rather than cancelling it.
  const { refetch } = options.useQuery.useQuery(options.input, { enabled: false });
  return useTokenSubscription(
    async () => {
      const { data } = await refetch({ throwOnError: true, cancelRefetch: false });
      if (data === undefined) throw new Error('useSubscriptionRelay: the token query resolved without data');
      return data;
    },
    inputKey,
    options,
  );
}
