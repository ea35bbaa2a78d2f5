import type { CoreLog, LeaseStore, StreamWriter } from '@streamgate/ingest-core';
import type { SymbolWriterEvents } from './SymbolWriter.js';
import { VenueAdapter } from './VenueAdapter.js';
import type { VenueConfig } from './venueConfig.js';
import { venueStreams } from './venueConfig.js';
import { VenueFeed } from './VenueFeed.js';
import { VenueHttpClient } from './VenueHttpClient.js';
import type { VenueKeyShares } from './VenueKeyShares.js';
import type { VenueMetrics } from './VenueMetrics.js';

export interface VenueWiring {
  readonly workerId: string;
  readonly leases: LeaseStore;
  readonly writer: StreamWriter;
  readonly leaseTtlMs: number;
  readonly metrics: VenueMetrics;
  /** The ingest-wide per-stream counts (ingest_events_written_total, ingest_dedupe_hits_total). */
  readonly streamCounts?: Pick<SymbolWriterEvents, 'written' | 'duplicates'>;
  readonly log: CoreLog;
  /** The rate limiters and session budgets of the topology's (endpoint, app key) pairs, one set per worker. */
  readonly shares: VenueKeyShares;
}

/** One venue from the topology: its adapter and the stream keys (one per symbol) it serves. */
export function createVenueAdapter(name: string, config: VenueConfig, wiring: VenueWiring): { adapter: VenueAdapter; keys: string[] } {
  const { prefix, control } = venueStreams(name, config);
  // Shared with every other topology venue on the same endpoint and key: the venue's limits are the key's.
  const { limiter, sessions } = wiring.shares.for(config);
  const http = new VenueHttpClient({ baseUrl: config.httpUrl, appKey: config.appKey, limiter });
  const feedEvents = wiring.metrics.feedEvents(name);
  const adapter = new VenueAdapter({
    venue: name,
    streamPrefix: prefix,
    controlStream: control,
    workerId: wiring.workerId,
    leases: wiring.leases,
    writer: wiring.writer,
    leaseTtlMs: wiring.leaseTtlMs,
    maxBuffer: config.maxBufferPerSymbol,
    log: wiring.log,
    events: { ...wiring.metrics.writerEvents(name), ...wiring.streamCounts },
    createFeed: ({ onPayload, onNotice }) =>
      new VenueFeed({
        venue: name,
        mqttUrl: config.mqttUrl,
        appKey: config.appKey,
        http,
        kinds: config.kinds,
        declaredKinds: config.declaredKinds,
        maxSymbolsPerSession: config.maxSymbolsPerSession,
        maxSessions: config.maxSessions,
        sessions,
        reassertIntervalMs: config.reassertIntervalMs,
        reconcileTimeoutMs: config.reconcileTimeoutMs,
        callTimeoutMs: config.callTimeoutMs,
        rejectedSymbolTtlMs: config.rejectedSymbolTtlMs,
        coverageStaleMs: config.coverageStaleMs,
        connectTimeoutMs: config.connectTimeoutMs,
        log: wiring.log,
        events: feedEvents,
        onPayload,
        onNotice: (notice) => {
          wiring.metrics.notice(name, notice.type);
          onNotice(notice);
        },
      }),
  });
  wiring.metrics.watch(name, () => adapter.activeFeed);
  return { adapter, keys: config.symbols.map((s) => prefix + s) };
}
