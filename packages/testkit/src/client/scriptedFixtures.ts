import { afterEach } from 'vitest';
import { WebSocket } from 'ws';
import { recordingLogger } from './recordingLogger.js';
import type { RecordingLogger } from './recordingLogger.js';
import { ScriptedRelay } from './ScriptedRelay.js';

export type Tick = { n: number };
export const STREAM = 'demo:ticks';
/** A token expiry ten minutes out, in JWT seconds. */
export const expSoon = (): number => Math.floor(Date.now() / 1000) + 600;

/** What every client made by the fixtures gets: real `ws` sockets, a quiet logger, a short backoff. */
export interface ScriptedClientDefaults {
  urls: string[];
  WebSocket: typeof WebSocket;
  logger: RecordingLogger;
  backoff: { baseMs: number; maxMs: number };
}

/**
 * Registers cleanup for the calling test file and returns factories for scripted relays and
 * clients pointed at them; everything made is closed after each test. The client class is passed
 * in (`scriptedFixtures(RelayClient)`) so testkit does not depend on the client package, whose
 * tests depend on testkit.
 */
export function scriptedFixtures<O extends object, C extends { close(): void }>(
  Client: new (options: ScriptedClientDefaults & Partial<O>) => C,
): {
  relay: () => Promise<ScriptedRelay>;
  client: (urls: string[], extra?: Partial<O>) => C;
  setup: () => Promise<{ r: ScriptedRelay; c: C }>;
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
  const client = (urls: string[], extra: Partial<O> = {}): C => {
    const defaults: ScriptedClientDefaults = { urls, WebSocket, logger: recordingLogger(), backoff: { baseMs: 10, maxMs: 50 } };
    const c = new Client({ ...defaults, ...extra });
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
