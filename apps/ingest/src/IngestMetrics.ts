import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from 'pino';
import type { FaultKind } from '@streamgate/boot';
import type { LeaseChange, WorkerEvents } from '@streamgate/ingest-core';
import type { EvmRunEvents, FailoverState } from './evm/evmEvents.js';

const STATES: FailoverState[] = ['connecting', 'active', 'backfilling', 'switching', 'degraded'];

/** Prometheus metrics and structured logs for everything an operator asks about after an incident. */
export class IngestMetrics {
  readonly registry = new Registry();
  private readonly failovers = new Counter({
    name: 'ingest_failovers_total',
    help: 'WebSocket provider failovers',
    labelNames: ['stream', 'from', 'to'],
    registers: [this.registry],
  });
  private readonly failoverSeconds = new Histogram({
    name: 'ingest_failover_duration_seconds',
    help: 'From detecting a failed provider to the next subscription being live',
    buckets: [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly failbacks = new Counter({
    name: 'ingest_failbacks_total',
    help: 'Returns to the preferred WebSocket provider after the failback hold-down',
    labelNames: ['stream', 'from', 'to'],
    registers: [this.registry],
  });
  private readonly backfillBlocks = new Counter({
    name: 'ingest_backfill_blocks_total',
    help: 'Blocks fetched over HTTP to fill gaps',
    labelNames: ['stream'],
    registers: [this.registry],
  });
  private readonly degradedGauge = new Gauge({
    name: 'ingest_degraded',
    help: '1 while a stream is in degraded mode',
    labelNames: ['stream'],
    registers: [this.registry],
  });
  private readonly gaps = new Counter({
    name: 'ingest_gaps_total',
    help: 'Unfillable gaps written (gap event or stream error)',
    labelNames: ['stream', 'policy'],
    registers: [this.registry],
  });
  private readonly reorgs = new Counter({
    name: 'ingest_reorgs_total',
    help: 'Reorgs written to streams',
    labelNames: ['stream'],
    registers: [this.registry],
  });
  private readonly reorgDepth = new Histogram({
    name: 'ingest_reorg_depth_blocks',
    help: 'Blocks replaced per reorg',
    buckets: [1, 2, 3, 5, 8, 13, 32, 64],
    registers: [this.registry],
  });
  private readonly dedupe = new Counter({
    name: 'ingest_dedupe_hits_total',
    help: 'Events dropped as already written (memory: seen hash; redis or jetstream: the log refused a written dedupe id)',
    labelNames: ['stream', 'where'],
    registers: [this.registry],
  });
  private readonly written = new Counter({
    name: 'ingest_events_written_total',
    help: 'Entries XADDed',
    labelNames: ['stream'],
    registers: [this.registry],
  });
  private readonly leases = new Counter({
    name: 'ingest_lease_changes_total',
    help: 'Lease acquisitions, losses and releases',
    labelNames: ['stream', 'change'],
    registers: [this.registry],
  });
  private readonly providerErrors = new Counter({
    name: 'ingest_provider_errors_total',
    help: 'Upstream errors by provider and kind (garbage = not JSON-RPC)',
    labelNames: ['provider', 'code'],
    registers: [this.registry],
  });
  private readonly state = new Gauge({
    name: 'ingest_stream_state',
    help: '1 for the failover state each stream is in',
    labelNames: ['stream', 'state'],
    registers: [this.registry],
  });
  readonly ownedStreams = new Gauge({
    name: 'ingest_owned_streams',
    help: 'Streams whose lease this worker holds',
    registers: [this.registry],
  });
  readonly demandErrors = new Counter({
    name: 'ingest_demand_errors_total',
    help: 'Failed reads of the demand set',
    registers: [this.registry],
  });
  private readonly faults = new Counter({
    name: 'ingest_faults_total',
    help: 'Unhandled rejections and uncaught exceptions; each one ends the process after releasing its leases',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  private readonly opsFailures = new Counter({
    name: 'ingest_ops_publish_failures_total',
    help: 'Operations snapshots not published, by code (sink_failed: the ops Redis did not take it)',
    labelNames: ['code'],
    registers: [this.registry],
  });
  private readonly undemandable = new Gauge({
    name: 'ingest_streams_outside_demand_prefixes',
    help: 'Topology streams under none of INGEST_DEMAND_PREFIXES: relays and auth never register demand for them, so they are never served',
    registers: [this.registry],
  });

  /** `entryLog`: where entries are written, which is where a write's dedupe id is checked. */
  constructor(
    private readonly log: Logger,
    private readonly entryLog: 'redis' | 'jetstream' = 'redis',
  ) {
    collectDefaultMetrics({ register: this.registry });
  }

  readonly evm: EvmRunEvents = {
    failover: (stream, from, to, durationMs, reason) => {
      this.failovers.inc({ stream, from, to: to ?? 'none' });
      this.failoverSeconds.observe(durationMs / 1000);
      this.log.warn({ stream, from, to, durationMs, reason }, 'failover');
    },
    failback: (stream, from, to, durationMs) => {
      this.failbacks.inc({ stream, from, to });
      this.log.info({ stream, from, to, durationMs }, 'failback to the preferred provider');
    },
    backfill: (stream, blocks, fetchMs, writeMs) => {
      this.backfillBlocks.inc({ stream }, blocks);
      this.log.info({ stream, blocks, fetchMs: Math.round(fetchMs), writeMs: Math.round(writeMs) }, 'backfill');
    },
    degraded: (stream, on) => {
      this.degradedGauge.set({ stream }, on ? 1 : 0);
      this.log.warn({ stream, degraded: on }, on ? 'degraded mode' : 'leaving degraded mode');
    },
    gap: (stream, fromBlock, toBlock, policy) => {
      this.gaps.inc({ stream, policy });
      this.log.error({ stream, fromBlock, toBlock, policy }, 'gap');
    },
    reorg: (stream, depth) => {
      this.reorgs.inc({ stream });
      this.reorgDepth.observe(depth);
      this.log.warn({ stream, depth }, 'reorg');
    },
    dedupeHits: (stream, where, count) => this.dedupe.inc({ stream, where: where === 'log' ? this.entryLog : 'memory' }, count),
    written: (stream, count) => this.written.inc({ stream }, count),
    providerError: (provider, code, message) => {
      this.providerErrors.inc({ provider, code });
      this.log.warn({ provider, code, message }, 'provider error');
    },
    stateChanged: (stream, state) => {
      for (const s of STATES) this.state.set({ stream, state: s }, s === state ? 1 : 0);
      this.log.info({ stream, state }, 'stream state');
    },
  };

  fault(kind: FaultKind): void {
    this.faults.inc({ kind });
  }

  opsPublishFailed(code: string): void {
    this.opsFailures.inc({ code });
  }

  /** At boot: the topology streams that no demand prefix covers (see streamsOutsidePrefixes). */
  demandCoverage(outside: readonly string[], prefixes: readonly string[]): void {
    this.undemandable.set(outside.length);
    if (outside.length === 0) return;
    this.log.warn(
      { streams: outside, demandPrefixes: prefixes },
      `${outside.length} topology stream(s) match no demand prefix: relays and auth never register demand for them, so ingest never serves them; rename the streams or add their prefix to RELAY_DEMAND_PREFIXES, AUTH_DEMAND_PREFIXES and INGEST_DEMAND_PREFIXES`,
    );
  }

  readonly worker: WorkerEvents = {
    leaseChanged: (stream: string, change: LeaseChange) => this.leases.inc({ stream, change }),
    demandError: () => this.demandErrors.inc(),
  };
}
