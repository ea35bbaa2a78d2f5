import { RateLimiter, SymbolWriter, VenueFeed, VenueHttpClient } from '@streamgate/ingest';
import type { VenueFeedOptions, VenueKind, VenueNotice, VenuePayload } from '@streamgate/ingest';
import { RedisLeaseStore, RedisStreamWriter } from '@streamgate/ingest-core/redis';
import { startRedis } from '@streamgate/testkit';
import { startVenueSim } from '@streamgate/testkit';
import type { RedisServer, StartVenueSimOptions, VenueSim } from '@streamgate/testkit';

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
  /** With `redis: true`: the (kind, seq) of every entry in a symbol's stream, in stream order. */
  streamEntries(symbol: string): Promise<{ kind: string; seq: number }[]>;
  /** With `redis: true`: writes that failed (none expected). */
  readonly sinkErrors: readonly string[];
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
  /**
   * Also write every payload the way ingest does: a real redis-server, one lease per symbol
   * stream, the fenced and deduplicated Lua writer, one `SymbolWriter` per symbol.
   */
  readonly redis?: boolean;
}

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Symbols that the simulated venue lists: `S000`, `S001`, … */
export function symbols(count: number, from = 0, prefix = 'S'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(3, '0')}`);
}

/**
 * A simulated venue and a feed against it over real MQTT and HTTP, with timings short enough
 * that ticks, deadlines and TTLs happen within a test: a 400 ms re-assert tick, callers answered
 * by 10 s (tests of slow answers shorten it), coverage stale after 600 ms without a payload (the venue publishes every 50 ms).
 */
export async function startVenueHarness(options: VenueHarnessOptions = {}): Promise<VenueHarness> {
  const sim = await startVenueSim({ publishIntervalMs: 50, ...options.sim });
  const sink = options.redis === true ? await redisSink() : undefined;
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
      sink?.push(p);
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
    await sink?.close();
  };
  return {
    sim,
    feed,
    limiter,
    notices,
    payloads,
    received,
    symbolsSeenSince: (since) => new Set([...lastSeen].filter(([, at]) => at > since).map(([s]) => s)),
    sinkErrors: sink?.errors ?? [],
    streamEntries: async (symbol) => {
      if (sink === undefined) throw new Error('start the harness with redis: true');
      return sink.entries(symbol);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Payloads into Redis streams `md.sim.<SYMBOL>` through the same writer path ingest uses. */
async function redisSink() {
  const server: RedisServer = await startRedis();
  const redis = server.client();
  const writer = new RedisStreamWriter({ redis, keyPrefix: 'sg:ingest:', dedupeTtlMs: 3_600_000, maxLen: 0 });
  const leases = new RedisLeaseStore(redis, 'sg:ingest:');
  const abort = new AbortController();
  const writers = new Map<string, Promise<SymbolWriter>>();
  const errors: string[] = [];
  const writerFor = (symbol: string): Promise<SymbolWriter> => {
    let w = writers.get(symbol);
    if (w === undefined) {
      const key = `md.sim.${symbol}`;
      w = leases.acquire(key, 'harness', 600_000).then((lease) => {
        if (lease === null) throw new Error(`lease for ${key} is held`);
        const fence = { key, token: lease.token };
        const ctx = {
          key,
          state: new Map<string, string>(),
          signal: abort.signal,
          write: (batch: Parameters<RedisStreamWriter['write']>[1]) => writer.write(fence, batch),
        };
        return new SymbolWriter(ctx, 100_000, (end) => errors.push(`${key} writer ended: ${JSON.stringify(end)}`));
      });
      writers.set(symbol, w);
    }
    return w;
  };
  return {
    errors,
    push: (p: VenuePayload) =>
      void writerFor(p.symbol).then(
        (w) => w.push(p),
        (error: unknown) => errors.push(String(error)),
      ),
    entries: async (symbol: string) => {
      const rows = await redis.xrange(`md.sim.${symbol}`, '-', '+');
      return rows.map(([, fields]) => {
        const data = JSON.parse(fields[fields.indexOf('data') + 1] ?? 'null') as { kind: string; seq: number };
        return { kind: data.kind, seq: data.seq };
      });
    },
    close: async () => {
      abort.abort();
      for (const w of writers.values()) (await w.catch(() => undefined))?.stop();
      await server.stop();
    },
  };
}

/** Per kind, the seq steps in a stream that are not +1: duplicates, reorderings and gaps. */
export function seqBreaks(entries: readonly { kind: string; seq: number }[]): string[] {
  const last = new Map<string, number>();
  const breaks: string[] = [];
  for (const { kind, seq } of entries) {
    const before = last.get(kind);
    if (before !== undefined && seq !== before + 1) breaks.push(`${kind}: ${before} → ${seq}`);
    last.set(kind, seq);
  }
  return breaks;
}

/** Which symbols each connected session holds at the venue, by session id (sorted). */
export function holdings(sim: VenueSim): Map<string, string[]> {
  return new Map(
    sim
      .sessions()
      .filter((s) => s.connected)
      .map((s) => [s.id, s.subscribed.map((x) => x.symbol).sort()]),
  );
}

/** The steps of `seqBreaks` that went backwards or repeated (a forward jump is only a miss). */
export function seqRegressions(entries: readonly { kind: string; seq: number }[]): string[] {
  return seqBreaks(entries).filter((b) => {
    const [from = 0, to = 0] = (b.split(': ')[1] ?? '').split(' → ').map(Number);
    return to <= from;
  });
}
