import type { StreamName } from './streamName.js';

/**
 * What a token procedure returns: a token for one stream, whose TypeScript type carries the
 * stream's payload type `T`. `__payload` exists only at type level (it is never set at run time),
 * so `T` survives tRPC's output inference and reaches the client without a cast.
 */
export type RelaySubscription<T> = {
  token: string;
  stream: StreamName;
  /** Token expiry, milliseconds since the epoch. */
  expiresAt: number;
  readonly __payload?: T;
};

/** The payload type a `RelaySubscription` carries. */
export type InferRelayPayload<S> = S extends RelaySubscription<infer T> ? T : never;
