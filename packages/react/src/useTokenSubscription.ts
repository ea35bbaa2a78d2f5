import { useEffect, useRef, useState } from 'react';
import type { EventMeta, RecoveryInfo, ResetInfo, SubscriptionError, SubscriptionState } from '@streamgate/client';
import type { RelaySubscription, StreamId } from '@streamgate/protocol';
import { useRelayClient } from './RelayProvider.js';

/** What every form of `useSubscriptionRelay` accepts besides the token procedure and its input. */
export interface SubscriptionRelayCallbacks<TPayload> {
  /**
   * Called for every event; the latest function is used without resubscribing. The payload type
   * comes from the procedure alone, so a callback annotated with another type is an error, not a cast.
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
 * Subscribes with tokens from `fetchToken` while mounted and enabled; a new `inputKey`
 * resubscribes. Every integration's hook reduces to this once it knows how to fetch a token.
 */
export function useTokenSubscription<TPayload>(
  fetchToken: () => Promise<RelaySubscription<TPayload>>,
  inputKey: string,
  options: SubscriptionRelayCallbacks<TPayload>,
): SubscriptionRelayResult {
  const client = useRelayClient();
  // The first render already says what the effect is about to do: an enabled hook is connecting,
  // never `idle`, which means disabled.
  const [result, setResult] = useState<SubscriptionRelayResult>(() =>
    (options.enabled ?? true) ? { state: 'connecting', error: undefined, position: options.from } : IDLE,
  );
  // Callbacks, the fetch (closing over a fresh tRPC proxy on every render) and `from` are read
  // through this ref, so only the input's key, `enabled` and the client decide when to resubscribe.
  const latest = useRef({ fetchToken, options });
  useEffect(() => {
    latest.current = { fetchToken, options };
  });
  const enabled = options.enabled ?? true;

  useEffect(() => {
    if (!enabled) {
      setResult(IDLE);
      return undefined;
    }
    // Callbacks of a subscription being replaced must not write over its successor's result.
    let active = true;
    const sub = client.subscribe<TPayload>({
      getToken: () => latest.current.fetchToken(),
      from: latest.current.options.from,
      onEvent: (data, meta) => {
        if (!active) return;
        setResult((r) => ({ ...r, position: meta.id }));
        latest.current.options.onSubscriptionData(data, meta);
      },
      onStateChange: (state) => {
        if (!active) return;
        setResult((r) => ({ ...r, state, error: state === 'live' ? undefined : r.error, position: sub.position }));
      },
      onError: (error) => {
        if (!active) return;
        setResult((r) => ({ ...r, error }));
        latest.current.options.onError?.(error);
      },
      onRecovery: (info) => {
        if (active) latest.current.options.onRecovery?.(info);
      },
      onReset: (info) => {
        if (!active) return;
        setResult((r) => ({ ...r, position: info.position }));
        latest.current.options.onReset?.(info);
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
