import { RateLimiter, VenueFeed, VenueHttpClient } from '@streamgate/ingest';
import type { VenueFeedOptions, VenueKind, VenueNotice, VenuePayload } from '@streamgate/ingest';
import { startVenueSim } from '@streamgate/testkit';
import type { StartVenueSimOptions, VenueSim } from '@streamgate/testkit';

export const APP_KEY = 'sim-app-key';
export const ALL_KINDS: VenueKind[] = ['snapshot', 'quote', 'tick'];

export interface VenueHarness extends AsyncDisposable {
  readonly sim: VenueSim;
  readonly feed: VenueFeed;
  readonly limiter: RateLimiter;
  readonly notices: VenueNotice[];
  readonly payloads: VenuePayload[];
  /** Payloads per symbol since the harness started (cheap to poll). */
  readonly received: Map<string, number>;
  /** Symbols whose payloads arrived after `since` (ms epoch). */
  symbolsSeenSince(since: number): Set<string>;
  close(): Promise<void>;
}

export interface VenueHarnessOptions {
  readonly sim?: StartVenueSimOptions;
  readonly feed?: Partial<Omit<VenueFeedOptions, 'http' | 'mqttUrl' | 'appKey' | 'onNotice' | 'onPayload'>>;
  readonly limiter?: { perSecond: number; burst: number };
  /** Keep every payload in `payloads` (memory grows with the run); default false. */
  readonly keepPayloads?: boolean;
  /** Runs inside the feed's payload callback; a throw there is a crash of that session's handling. */
  readonly onPayload?: (payload: VenuePayload) => void;
}

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Symbols that the simulated venue lists: `S000`, `S001`, … */
export function symbols(count: number, from = 0, prefix = 'S'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(3, '0')}`);
}

/**
 * A simulated venue and a feed against it over real MQTT and HTTP, with timings short enough
 * that ticks, deadlines and TTLs happen within a test: a 400 ms re-assert tick, callers answered
 * by 2 s, coverage stale after 600 ms without a payload (the venue publishes every 50 ms).
 */
export async function startVenueHarness(options: VenueHarnessOptions = {}): Promise<VenueHarness> {
  const sim = await startVenueSim({ publishIntervalMs: 50, ...options.sim });
  const limiter = new RateLimiter(options.limiter ?? { perSecond: 200, burst: 50 });
  const http = new VenueHttpClient({ baseUrl: sim.httpUrl, appKey: APP_KEY, limiter });
  const notices: VenueNotice[] = [];
  const payloads: VenuePayload[] = [];
  const received = new Map<string, number>();
  const lastSeen = new Map<string, number>();
  const feed = new VenueFeed({
    venue: 'sim',
    mqttUrl: sim.mqttUrl,
    appKey: APP_KEY,
    http,
    kinds: ALL_KINDS,
    maxSymbolsPerSession: 100,
    maxSessions: 5,
    reassertIntervalMs: 400,
    reconcileTimeoutMs: 5_000,
    callTimeoutMs: 15_000,
    rejectedSymbolTtlMs: 86_400_000,
    coverageStaleMs: 600,
    connectTimeoutMs: 2_000,
    log: quietLog,
    ...options.feed,
    onNotice: (n) => notices.push(n),
    onPayload: (p) => {
      if (options.keepPayloads === true) payloads.push(p);
      received.set(p.symbol, (received.get(p.symbol) ?? 0) + 1);
      lastSeen.set(p.symbol, Date.now());
      options.onPayload?.(p);
    },
  });
  feed.start();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await feed.close();
    await sim.close();
  };
  return {
    sim,
    feed,
    limiter,
    notices,
    payloads,
    received,
    symbolsSeenSince: (since) => new Set([...lastSeen].filter(([, at]) => at > since).map(([s]) => s)),
    close,
    [Symbol.asyncDispose]: close,
  };
}
