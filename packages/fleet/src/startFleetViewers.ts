import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { RelayLogger, SubscriptionError } from '@streamgate/client';
import type { RelaySubscription } from '@streamgate/protocol';

export interface FleetViewersOptions {
  /** Where viewers connect: the front door, so a drained pod's viewers land on another pod. */
  url: string;
  count: number;
  /** The streams viewer `index` subscribes to. */
  streams: (index: number) => readonly string[];
  issue: (stream: string, subject: string) => Promise<RelaySubscription<unknown>>;
  /** A subscription error (token refused, connection closed for good…). */
  onError?: (viewer: number, stream: string, error: SubscriptionError) => void;
  /** The client's own warnings (a socket that would not open…), which it would print to the console. */
  onLog?: (viewer: number, message: string) => void;
}

export interface FleetViewers {
  /** Events received by all viewers so far. */
  readonly events: number;
  readonly errors: number;
  close(): void;
}

/**
 * Simulated audience: `count` clients, each on its own socket, subscribed quietly. They give the
 * relays connections to drain and, through the relays' demand heartbeats, make ingest serve
 * the chain and venue streams they watch.
 */
export function startFleetViewers(options: FleetViewersOptions): FleetViewers {
  let events = 0;
  let errors = 0;
  const report = (viewer: number, stream: string, error: SubscriptionError) => {
    errors++;
    options.onError?.(viewer, stream, error);
  };
  const logger = (viewer: number): RelayLogger => ({
    debug: () => undefined,
    warn: (message) => options.onLog?.(viewer, message),
    error: (message) => options.onLog?.(viewer, message),
  });
  const clients: RelayClient[] = [];
  for (let i = 0; i < options.count; i++) {
    const client = new RelayClient({ urls: [options.url], WebSocket, logger: logger(i), backoff: { baseMs: 100, maxMs: 2_000 } });
    for (const stream of options.streams(i)) {
      client.subscribe({
        getToken: () => options.issue(stream, `viewer-${i}`),
        onEvent: () => void events++,
        onError: (error) => report(i, stream, error),
      });
    }
    clients.push(client);
  }
  return {
    get events() {
      return events;
    },
    get errors() {
      return errors;
    },
    close: () => {
      for (const client of clients) client.close();
    },
  };
}
