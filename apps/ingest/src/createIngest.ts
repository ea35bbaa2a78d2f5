import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorMessage, IngestWorker } from '@streamgate/ingest-core';
import type { UpstreamAdapter } from '@streamgate/ingest-core';
import type { IngestConfig } from './config.js';
import { EvmAdapter } from './evm/EvmAdapter.js';
import { ProviderPool } from './evm/ProviderPool.js';
import { IngestMetrics } from './IngestMetrics.js';
import { openIngestJetStream } from './jetstream/openIngestJetStream.js';
import { startIngestOps } from './ops/startIngestOps.js';
import { ingestReadiness } from './redis/ingestReadiness.js';
import { openIngestRedis } from './redis/openIngestRedis.js';
import { streamsOutsidePrefixes } from './streamsOutsidePrefixes.js';
import { createVenueAdapter } from './venue/createVenueAdapter.js';
import type { VenueAdapter } from './venue/VenueAdapter.js';
import { VenueKeyShares } from './venue/VenueKeyShares.js';
import { VenueMetrics } from './venue/VenueMetrics.js';

export interface Ingest {
  readonly port: number;
  readonly worker: IngestWorker;
  readonly metrics: IngestMetrics;
  close(): Promise<void>;
}

/**
 * Wires Redis (and the JetStream target, when the streams live there), the EVM adapters (one per
 * configured stream, one provider pool per chain) and the worker.
 */
export async function createIngest(config: IngestConfig, log: Logger): Promise<Ingest> {
  const metrics = new IngestMetrics(log, config.jetStream === undefined ? 'redis' : 'jetstream');
  const redis = openIngestRedis(config, log);
  // Streams on a JetStream target are written there; their leases and demand stay in Redis.
  const jetStream =
    config.jetStream === undefined ? undefined : openIngestJetStream(config.jetStream, config.INGEST_WORKER_ID, log, metrics.registry);
  const { leases } = redis.targets;
  const writer = jetStream?.writer ?? redis.targets.writer;
  const pools = new Map<string, ProviderPool>();
  const adapters = new Map<string, UpstreamAdapter>();
  const evmAdapters = new Map<string, EvmAdapter>();
  for (const spec of config.topology.streams) {
    const chain = config.topology.chains[spec.chain];
    if (chain === undefined) continue; // config validation guarantees it exists
    let pool = pools.get(spec.chain);
    if (pool === undefined) {
      pool = new ProviderPool(chain.providers, chain.requestTimeoutMs, chain.failoverWindowMs, (error) =>
        metrics.evm.providerError(error.provider, error.code, error.message),
      );
      pools.set(spec.chain, pool);
    }
    const adapter = new EvmAdapter(spec, chain, pool, metrics.evm);
    adapters.set(spec.stream, adapter);
    evmAdapters.set(spec.stream, adapter);
  }
  const venueMetrics = new VenueMetrics(metrics.registry);
  const venues = new Map<string, VenueAdapter>();
  const shares = new VenueKeyShares();
  for (const [name, venue] of Object.entries(config.topology.venues)) {
    const wiring = {
      workerId: config.INGEST_WORKER_ID,
      leases,
      writer,
      leaseTtlMs: config.INGEST_LEASE_TTL_MS,
      metrics: venueMetrics,
      streamCounts: {
        written: (stream: string, count: number) => metrics.evm.written(stream, count),
        duplicates: (stream: string, count: number) => metrics.evm.dedupeHits(stream, 'log', count),
      },
      log,
      shares,
    };
    const { adapter, keys } = createVenueAdapter(name, venue, wiring);
    venues.set(name, adapter);
    for (const key of keys) adapters.set(key, adapter);
  }
  if (config.INGEST_DEMAND_PREFIXES.length === 0) {
    log.info('INGEST_DEMAND_PREFIXES unset: topology streams are not checked against the demand prefixes of relays and auth');
  } else {
    metrics.demandCoverage(streamsOutsidePrefixes(adapters.keys(), config.INGEST_DEMAND_PREFIXES), config.INGEST_DEMAND_PREFIXES);
  }
  const worker = new IngestWorker({
    workerId: config.INGEST_WORKER_ID,
    adapters,
    demand: redis.targets.demand((target, error) => {
      metrics.worker.demandError?.(error);
      log.warn({ target, err: errorMessage(error) }, 'demand read failed on one target');
    }),
    leases,
    writer,
    leaseTtlMs: config.INGEST_LEASE_TTL_MS,
    tickMs: config.INGEST_TICK_MS,
    graceMs: config.INGEST_DEMAND_GRACE_MS,
    log,
    events: metrics.worker,
  });
  worker.start();
  const ops =
    config.INGEST_OPS_REDIS_URL === undefined
      ? undefined
      : startIngestOps({
          redisUrl: config.INGEST_OPS_REDIS_URL,
          username: config.INGEST_REDIS_USERNAME,
          password: config.INGEST_REDIS_PASSWORD,
          stream: config.INGEST_OPS_STREAM,
          log,
          countFailure: (code) => metrics.opsPublishFailed(code),
          source: {
            pod: config.INGEST_WORKER_ID,
            startedAt: Math.round(performance.timeOrigin),
            now: Date.now,
            leasesHeld: () => worker.ownedKeys.length + [...venues.values()].filter((v) => v.leaseHeld).length,
            chains: () => worker.ownedKeys.flatMap((key) => evmAdapters.get(key)?.view() ?? []),
            venues: () => [...venues.values()].flatMap((v) => v.view() ?? []),
          },
        });

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      const answer = ingestReadiness(redis.targets.targets, redis.unready(), jetStream?.readiness());
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
    } else if (path?.startsWith('/venues/') === true) {
      // The coverage query: what is wanted, what is observed per kind, and each session's state.
      const feed = venues.get(decodeURIComponent(path.slice('/venues/'.length)))?.activeFeed;
      if (feed === undefined) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'no such venue served by this worker right now' }));
      } else {
        const snapshot = feed.coverageSnapshot();
        const byKind = Object.fromEntries(Object.entries(snapshot.byKind).map(([kind, set]) => [kind, [...set].sort()]));
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...feed.status(), coverage: [...snapshot.covered].sort(), coverageByKind: byKind }));
      }
    } else if (path === '/metrics') {
      metrics.ownedStreams.set(worker.ownedKeys.length);
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  // A port already taken is a failed start (exit 1), not an uncaught 'error' event (a fault, exit 70).
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.INGEST_PORT, config.INGEST_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    worker,
    metrics,
    close: async () => {
      // In parallel: a snapshot in flight to a slow ops Redis must not delay the lease releases.
      await Promise.all([ops?.stop(), worker.close()]);
      await Promise.all([...venues.values()].map((v) => v.close()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await jetStream?.close();
      redis.close();
    },
  };
}
