import { useEffect, useRef, useState } from 'react';
import type { EventMeta, RecoveryInfo, ResetInfo, SubscriptionError, SubscriptionState } from '@streamgate/client';
import type { RelaySubscription, StreamId } from '@streamgate/protocol';
import { useRelayClient } from './RelayProvider.js';
import { stableKey } from './stableKey.js';

/**
 * Anything with `query(input)` resolving to a relay token, such as a tRPC vanilla client
 * procedure (`trpcClient.demo.token`). The token's phantom type carries the payload type.
 */
export interface RelayTokenProcedure<TInput, TPayload> {
  query: (input: TInput) => Promise<RelaySubscription<TPayload>>;
}

/** The payload type of a token procedure. */
export type InferRelayProcedurePayload<P> = P extends RelayTokenProcedure<never, infer T> ? T : never;

export interface UseSubscriptionRelayOptions<TInput, TPayload> {
  query: RelayTokenProcedure<TInput, TPayload>;
  /** Compared by a stable JSON key: a structurally different input resubscribes. */
  input: NoInfer<TInput>;
  /**
   * Called for every event; the latest function is used without resubscribing. The payload type
   * comes from `query` alone, so a callback annotated with another type is an error, not a cast.
   */
  onSubscriptionData: (data: NoInfer<TPayload>, meta: EventMeta) => void;
  /** `false` unsubscribes (state `idle`). Default true. */
  enabled?: boolean;
  /** Resume after this id when the subscription starts. */
  from?: StreamId;
  onError?: (error: SubscriptionError) => void;
  /** The relay could not resume without a gap: reload the state built from earlier events. */
  onRecovery?: (info: RecoveryInfo) => void;
  /**
   * The stream was recreated while subscribed: drop what was built from the old incarnation;
   * its new entries (ids possibly lower than before) follow, each once, in order.
   */
  onReset?: (info: ResetInfo) => void;
}

export interface SubscriptionRelayResult {
  state: SubscriptionState | 'idle';
  /** The latest error; cleared when the subscription is live again. */
  error: SubscriptionError | undefined;
  position: StreamId | undefined;
}

const IDLE: SubscriptionRelayResult = { state: 'idle', error: undefined, position: undefined };

/**
 * Subscribes to the relay stream whose token `query(input)` mints, for as long as the component
 * is mounted and `enabled`. Every event re-renders with the new `position`.
 */
export function useSubscriptionRelay<TInput, TPayload>(options: UseSubscriptionRelayOptions<TInput, TPayload>): SubscriptionRelayResult {
  const client = useRelayClient();
  const [result, setResult] = useState<SubscriptionRelayResult>(IDLE);
  // Callbacks, the procedure (a fresh tRPC proxy on every render) and `from` are read through
  // this ref, so only the input's key, `enabled` and the client decide when to resubscribe.
  const latest = useRef(options);
  useEffect(() => {
    latest.current = options;
  });
  const enabled = options.enabled ?? true;
  const inputKey = stableKey(options.input);

  useEffect(() => {
    if (!enabled) {
      setResult(IDLE);
      return undefined;
    }
    // Callbacks of a subscription being replaced must not write over its successor's result.
    let active = true;
    const sub = client.subscribe<TPayload>({
      getToken: () => latest.current.query.query(latest.current.input),
      from: latest.current.from,
      onEvent: (data, meta) => {
        if (!active) return;
        setResult((r) => ({ ...r, position: meta.id }));
        latest.current.onSubscriptionData(data, meta);
      },
      onStateChange: (state) => {
        if (!active) return;
        setResult((r) => ({ ...r, state, error: state === 'live' ? undefined : r.error, position: sub.position }));
      },
      onError: (error) => {
        if (!active) return;
        setResult((r) => ({ ...r, error }));
        latest.current.onError?.(error);
      },
      onRecovery: (info) => {
        if (active) latest.current.onRecovery?.(info);
      },
      onReset: (info) => {
        if (!active) return;
        setResult((r) => ({ ...r, position: info.position }));
        latest.current.onReset?.(info);
      },
    });
    setResult({ state: sub.state, error: undefined, position: sub.position });
    return () => {
      active = false;
      sub.unsubscribe();
    };
  }, [client, enabled, inputKey]);

  return result;
}
