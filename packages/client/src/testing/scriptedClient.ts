import { afterEach } from 'vitest';
import { WebSocket } from 'ws';
import { RelayClient } from '../RelayClient.js';
import type { RelayClientOptions } from '../RelayClient.js';
import { recordingLogger, ScriptedRelay } from './scriptedRelay.js';

export type Tick = { n: number };
export const STREAM = 'demo:ticks';
/** A token expiry ten minutes out, in JWT seconds. */
export const expSoon = (): number => Math.floor(Date.now() / 1000) + 600;

/**
 * Registers cleanup for the calling test file and returns factories for scripted relays and
 * clients pointed at them; everything made is closed after each test.
 */
export function scriptedFixtures(): {
  relay: () => Promise<ScriptedRelay>;
  client: (urls: string[], extra?: Partial<RelayClientOptions>) => RelayClient;
  setup: () => Promise<{ r: ScriptedRelay; c: RelayClient }>;
} {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const relay = async (): Promise<ScriptedRelay> => {
    const r = await ScriptedRelay.start();
    cleanups.push(() => r.close());
    return r;
  };
  const client = (urls: string[], extra: Partial<RelayClientOptions> = {}): RelayClient => {
    const c = new RelayClient({ urls, WebSocket, logger: recordingLogger(), backoff: { baseMs: 10, maxMs: 50 }, ...extra });
    cleanups.push(() => c.close());
    return c;
  };
  return {
    relay,
    client,
    setup: async () => {
      const r = await relay();
      return { r, c: client([r.url]) };
    },
  };
}
