import type { RelaySubscription } from '@streamgate/protocol';

/**
 * A vanilla tRPC client procedure (`createTRPCClient<AppRouter>(…).demo.token`), or anything with
 * `query(input)` resolving to a relay token. The token's phantom type carries the payload type.
 */
export interface RelayTokenProcedure<TInput, TPayload> {
  query: (input: TInput) => Promise<RelaySubscription<TPayload>>;
}

/** The payload type of a vanilla token procedure. */
export type InferRelayProcedurePayload<P> = P extends RelayTokenProcedure<never, infer T> ? T : never;

/**
 * A classic `@trpc/react-query` procedure (`createTRPCReact<AppRouter>().demo.token`): the hook
 * calls its `useQuery` (disabled) on every render and fetches tokens with `refetch`.
 */
export interface ReactQueryTokenProcedure<TInput, TPayload> {
  useQuery(
    input: TInput,
    opts: { enabled: false },
  ): { refetch: (opts: { throwOnError: true; cancelRefetch: false }) => Promise<{ data?: RelaySubscription<TPayload> | undefined }> };
  // Read for its types only: unlike `useQuery`, it is neither overloaded nor generic, so its
  // parameters name the procedure's input and output exactly.
  usePrefetchQuery(input: never, opts?: never): void;
}

/** The input of a classic procedure, without the `skipToken` its hooks also accept. */
export type InferReactQueryInput<P> = P extends { usePrefetchQuery(input: infer I, ...rest: never): void } ? Exclude<I, symbol> : never;

export type ReactQueryOutput<P> = P extends { usePrefetchQuery(input: never, opts?: infer O): void }
  ? NonNullable<O> extends { initialData?: infer D }
    ? Exclude<D, (...args: never) => unknown>
    : never
  : never;

/** The payload type of a classic procedure whose output is a relay token. */
export type InferReactQueryPayload<P> = ReactQueryOutput<P> extends RelaySubscription<infer T> ? T : never;
