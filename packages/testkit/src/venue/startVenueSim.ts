import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallLog } from './CallLog.js';
import type { VenueSimCall } from './CallLog.js';
import { createVenueHttpHandler } from './createVenueHttpHandler.js';
import type { VenueSimFault } from './parseFault.js';
import { PublishLoop } from './PublishLoop.js';
import type { VenueSimPublished } from './PublishLoop.js';
import { SessionRegistry } from './SessionRegistry.js';
import type { VenueSessionState, VenueSimSession } from './SessionRegistry.js';
import { startVenueBroker } from './startVenueBroker.js';
import type { VenueBroker, VenueSimRefusedConnect } from './startVenueBroker.js';
import type { VenueRateLimit } from './TokenBucket.js';
import { VENUE_KINDS } from './venueKinds.js';
import type { VenueKind } from './venueKinds.js';
import { VenueState } from './VenueState.js';

export interface StartVenueSimOptions {
  /** App keys the venue knows (MQTT username, HTTP `x-app-key`). Default `['sim-app-key']`. */
  appKeys?: readonly string[];
  /** Concurrent MQTT sessions per app key. Default 5, the real venue's ceiling. */
  sessionsPerKey?: number;
  /** Distinct symbols one session may hold. Default 100, the real venue's stated ceiling. */
  symbolCeiling?: number;
  /** Default 50 ms. */
  publishIntervalMs?: number;
  /** Kinds the venue publishes; others can be subscribed but stay dark (as TICK does for us-crypto). Default all. */
  kinds?: readonly VenueKind[];
  /** Well-formed symbols the venue nevertheless refuses with INVALID_SYMBOL. */
  unknownSymbols?: readonly string[];
  /** The venue's own per-key request limit; default none. */
  rateLimit?: VenueRateLimit | null;
  /**
   * Refuse a CONNECT (return code 2) whose client id is not 1–23 characters of [0-9a-zA-Z], the
   * only ids MQTT 3.1.1 obliges a server to accept. Default false: longer ids are accepted.
   */
  strictClientIds?: boolean;
}

export interface VenueSim extends AsyncDisposable {
  /** `mqtt://127.0.0.1:<mqttPort>` */
  readonly mqttUrl: string;
  readonly mqttPort: number;
  /** `http://127.0.0.1:<httpPort>`; the API lives under `/v1/market-data/`, faults at `/sim/faults`. */
  readonly httpUrl: string;
  readonly httpPort: number;
  readonly appKeys: readonly string[];
  /** Registered sessions (CONNACK sent, not yet disconnected), in registration order. */
  sessions(): VenueSimSession[];
  session(id: string): VenueSimSession | undefined;
  /** Every CONNECT refused since start (unknown key, a key's session beyond the cap, a strict client id, refuseConnects), in order. */
  refusedConnects(): VenueSimRefusedConnect[];
  /** Every subscribe / unsubscribe call since start or the last clearCalls(), in arrival order. */
  calls(): VenueSimCall[];
  clearCalls(): void;
  published(): VenueSimPublished;
  /** The broker closes the session's connection; the venue forgets it. False if there is none. */
  dropSession(id: string): boolean;
  /** Resets the session's TCP socket: no DISCONNECT, no FIN. False if there is none. */
  crashSocket(id: string): boolean;
  /** Stays connected and keeps answering 200, but gets nothing until its next subscribe. False if there is none. */
  silence(id: string): boolean;
  /** Replaces the refused list; `[]` lists every well-formed symbol again ("listed later"). */
  setUnknownSymbols(symbols: readonly string[]): void;
  /** Applies to later subscribes; sessions already above it keep what they hold. */
  /** `stated`: the limit its refusals name, when the venue enforces less than it says (default: the real one). */
  setSymbolCeiling(limit: number, stated?: number): void;
  /** Delays later market-data answers (both operations, or just `op`); the venue acts at the end of the delay. */
  setResponseDelay(ms: number, op?: 'subscribe' | 'unsubscribe'): void;
  /** Delays the CONNACK of later CONNECTs. */
  setConnackDelay(ms: number): void;
  /** The next `count` market-data calls are answered `status` `{"code":"INTERNAL"}` before any other check. */
  failNextCalls(count: number, status?: number): void;
  /** Replaces the per-key limit (every key starts with a full bucket); null switches it off. */
  setRateLimit(limit: VenueRateLimit | null): void;
  /** Every (symbol, kind) numbers from seq 1 again, as a venue that restarted does. */
  restartSequences(): void;
  /**
   * The venue forgets `appKey`, as when a key is revoked: later HTTP calls with it get 401
   * INVALID_APP_KEY and later CONNECTs return code 4, while its connected sessions stay up.
   * False if the key was not known.
   */
  revokeAppKey(appKey: string): boolean;
  /**
   * Later CONNECTs with `appKey` get `returnCode` (1–5) before any other check, while its HTTP
   * calls and connected sessions carry on: a key refused at CONNECT only, or a CONNECT refused for
   * another reason (3: server unavailable). null ends it.
   */
  refuseConnects(appKey: string, returnCode: number | null): void;
  /** Stops publishing and closes both listeners and every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the simulated market-data venue: an MQTT broker where each connection is a session, an
 * HTTP API that subscribes sessions to symbols, and a publisher pushing `<kind>/<symbol>`
 * payloads to each session for what it holds. Both listen on kernel-picked ports of 127.0.0.1.
 * Use with `await using venue = await startVenueSim()` or close() in afterAll.
 */
export async function startVenueSim(options: StartVenueSimOptions = {}): Promise<VenueSim> {
  const appKeyList = [...(options.appKeys ?? ['sim-app-key'])];
  if (appKeyList.length === 0) throw new RangeError('startVenueSim needs at least one app key');
  const appKeys = new Set(appKeyList);
  const sessionsPerKey = options.sessionsPerKey ?? 5;
  if (!Number.isInteger(sessionsPerKey) || sessionsPerKey < 1)
    throw new RangeError(`sessionsPerKey must be an integer >= 1, got ${sessionsPerKey}`);
  const state = new VenueState({
    symbolCeiling: options.symbolCeiling ?? 100,
    unknownSymbols: options.unknownSymbols ?? [],
    rateLimit: options.rateLimit ?? null,
  });
  const registry = new SessionRegistry();
  const calls = new CallLog();
  const loop = new PublishLoop({
    intervalMs: options.publishIntervalMs ?? 50,
    kinds: options.kinds ?? VENUE_KINDS,
    sessions: () => registry.all(),
  });
  const lifetime = new AbortController();

  const broker: VenueBroker = await startVenueBroker({
    appKeys,
    sessionsPerKey,
    registry,
    strictClientIds: options.strictClientIds ?? false,
    connackDelayMs: () => state.connackDelayMs,
    connectRefusal: (appKey) => state.connectRefusal(appKey),
  });

  const withSession = (id: string, act: (session: VenueSessionState) => void): boolean => {
    const session = registry.get(id);
    if (session === undefined) return false;
    act(session);
    return true;
  };
  const dropSession = (id: string) => withSession(id, (s) => broker.drop(s.client));
  const crashSocket = (id: string) => withSession(id, (s) => broker.crash(s.client));
  const silence = (id: string) => withSession(id, (s) => (s.silenced = true));

  const applyFault = (fault: VenueSimFault): Record<string, unknown> => {
    switch (fault.fault) {
      case 'dropSession':
        return { found: dropSession(fault.sessionId) };
      case 'crashSocket':
        return { found: crashSocket(fault.sessionId) };
      case 'silence':
        return { found: silence(fault.sessionId) };
      case 'setUnknownSymbols':
        state.setUnknownSymbols(fault.symbols);
        return {};
      case 'setSymbolCeiling':
        state.setSymbolCeiling(fault.limit, fault.stated);
        return {};
      case 'setResponseDelay':
        state.setResponseDelay(fault.ms, fault.op);
        return {};
      case 'setConnackDelay':
        state.setConnackDelay(fault.ms);
        return {};
      case 'failNextCalls':
        state.failNextCalls(fault.count, fault.status);
        return {};
      case 'setRateLimit':
        state.setRateLimit(fault.rateLimit);
        return {};
      case 'restartSequences':
        loop.restartSequences();
        return {};
      case 'revokeAppKey':
        return { found: appKeys.delete(fault.appKey) };
      case 'refuseConnects':
        state.refuseConnects(fault.appKey, fault.returnCode);
        return {};
    }
  };

  const http = createServer(createVenueHttpHandler({ appKeys, state, registry, calls, applyFault, signal: lifetime.signal }));
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await broker.close();
    throw error;
  }
  const httpPort = (http.address() as AddressInfo).port;
  loop.start();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      loop.stop();
      lifetime.abort();
      const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await Promise.all([httpClosed, broker.close()]);
    })();
    return closing;
  };

  const sim: VenueSim = {
    mqttUrl: `mqtt://127.0.0.1:${broker.port}`,
    mqttPort: broker.port,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    httpPort,
    appKeys: appKeyList,
    sessions: () => [...registry.all()].map((session) => SessionRegistry.view(session)),
    session: (id) => {
      const session = registry.get(id);
      return session === undefined ? undefined : SessionRegistry.view(session);
    },
    refusedConnects: () => broker.refused.map((r) => ({ ...r })),
    calls: () => calls.list(),
    clearCalls: () => calls.clear(),
    published: () => loop.published(),
    dropSession,
    crashSocket,
    silence,
    setUnknownSymbols: (symbols) => state.setUnknownSymbols(symbols),
    setSymbolCeiling: (limit, stated) => state.setSymbolCeiling(limit, stated),
    setResponseDelay: (ms, op) => state.setResponseDelay(ms, op),
    setConnackDelay: (ms) => state.setConnackDelay(ms),
    failNextCalls: (count, status) => state.failNextCalls(count, status),
    setRateLimit: (limit) => state.setRateLimit(limit),
    restartSequences: () => loop.restartSequences(),
    // The broker and the HTTP side read this one set at each CONNECT and call.
    revokeAppKey: (appKey) => appKeys.delete(appKey),
    refuseConnects: (appKey, returnCode) => state.refuseConnects(appKey, returnCode),
    close,
    [Symbol.asyncDispose]: close,
  };
  return sim;
}
