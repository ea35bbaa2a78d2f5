import WebSocket from 'ws';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { RelayClient } from '@streamgate/client';
import type { DemoRouter } from '@streamgate/auth';
import type { RelaySubscription } from '@streamgate/server';
import { describeChainEvent } from './describeChainEvent.js';

export interface FleetTailOptions {
  relayUrl: string;
  authUrl: string;
  chainStream: string;
  issue: (stream: string, subject: string) => Promise<RelaySubscription<unknown>>;
  say: (line: string) => void;
  /** Called after each demo event and each chain block with the counts so far. */
  onProgress?: (seen: { demo: number; blocks: number }) => void;
}

type DemoEvent = { seq: number; text: string; at: string };

/**
 * The CLI tail: watches the demo ticks (token from the auth service's demo router, as a browser
 * would get it) and the chain's heads (token minted by the fleet, as a product backend would)
 * through the relays' front door, and prints each event.
 */
export function startFleetTail(options: FleetTailOptions): { close(): void } {
  const { say } = options;
  const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${options.authUrl}/trpc` })] });
  const client = new RelayClient({
    urls: [options.relayUrl],
    WebSocket,
    logger: { debug: () => undefined, warn: (m) => say(`tail    ${m}`), error: (m) => say(`tail    ${m}`) },
  });
  const seen = { demo: 0, blocks: 0 };
  client.subscribe<DemoEvent>({
    getToken: () => trpc.demo.token.query({ stream: 'ticks', user: 'fleet-tail' }),
    onEvent: (event, meta) => {
      say(`tail    ${meta.stream} ${meta.id} seq=${event.seq} ${event.text} (${event.at})`);
      seen.demo++;
      options.onProgress?.(seen);
    },
    onStateChange: (state) => say(`tail    subscription ${state}`),
    onError: (error) => say(`tail    error ${error.code}: ${error.message}`),
  });
  client.subscribe<unknown>({
    getToken: () => options.issue(options.chainStream, 'fleet-tail'),
    onEvent: (data, meta) => {
      const event = describeChainEvent(data);
      say(`chain   ${meta.stream} ${event.text}`);
      if (event.kind === 'block') seen.blocks++;
      options.onProgress?.(seen);
    },
    onStateChange: (state) => say(`chain   subscription ${state}`),
    onError: (error) => say(`chain   error ${error.code}: ${error.message}`),
  });
  return { close: () => client.close() };
}
