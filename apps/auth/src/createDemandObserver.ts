import type { RelayTokenObserver } from '@streamgate/server';

export interface DemandObserverOptions {
  /** Stream-name prefixes served by ingest workers, e.g. `evm:`; other streams are ignored. */
  readonly prefixes: readonly string[];
  readonly ttlMs: number;
  /** Records that `stream` is wanted for `ttlMs` (ingest's demand set, in the stream's Redis). */
  readonly register: (stream: string, ttlMs: number) => Promise<void>;
  readonly onOutcome: (outcome: 'registered' | 'failed', stream: string, error?: unknown) => void;
}

/**
 * Registers ingest demand when a token is minted for an ingest-backed stream, so the upstream
 * subscription starts while the browser is still connecting to a relay rather than after its
 * first heartbeat. Relays keep the demand alive from then on; a failure here only delays the
 * start by one relay heartbeat, so the token is never held back for it.
 */
export function createDemandObserver(options: DemandObserverOptions): RelayTokenObserver {
  const { prefixes, ttlMs, register, onOutcome } = options;
  return {
    issued: ({ stream }) => {
      if (!prefixes.some((p) => stream.startsWith(p))) return;
      register(stream, ttlMs).then(
        () => onOutcome('registered', stream),
        (error: unknown) => onOutcome('failed', stream, error),
      );
    },
  };
}

/** One observer that reports to each of `observers` in turn. */
export function combineObservers(...observers: readonly RelayTokenObserver[]): RelayTokenObserver {
  return {
    requested: (event) => observers.forEach((o) => o.requested?.(event)),
    issued: (event) => observers.forEach((o) => o.issued?.(event)),
    denied: (event) => observers.forEach((o) => o.denied?.(event)),
  };
}
