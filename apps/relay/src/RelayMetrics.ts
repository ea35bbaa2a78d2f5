import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CloseCodeName, ErrorCode } from '@streamgate/protocol';
import type { HubMetrics } from './core/HubMetrics.js';
import { DemandMetrics } from './demand/DemandMetrics.js';
import { RefusalTally } from './ops/RefusalTally.js';
import { STREAM_RESET_CAUSES } from './redis/StreamResetCause.js';

/** Limit breaches that close the connection (the others answer with an error frame, counted by code). */
const CLOSING_LIMITS: Readonly<Record<string, CloseCodeName>> = {
  connections: 'overloaded',
  connection_rate: 'connectionRateLimited',
  protocol_violation: 'protocolViolation',
};

/** The relay's Prometheus metrics, on a registry of its own (several relays may share a process in tests). */
export class RelayMetrics {
  readonly registry = new Registry();
  readonly connections = new Gauge({
    name: 'streamgate_relay_connections',
    help: 'Open WebSocket connections',
    registers: [this.registry],
  });
  readonly subscriptions = new Gauge({ name: 'streamgate_relay_subscriptions', help: 'Active subscriptions', registers: [this.registry] });
  readonly streams = new Gauge({ name: 'streamgate_relay_streams', help: 'Streams read by this pod', registers: [this.registry] });
  readonly deliveries = new Counter({
    name: 'streamgate_relay_deliveries_total',
    help: 'Event frames handed to sockets',
    labelNames: ['path'] as const,
    registers: [this.registry],
    collect: () => this.foldDeliveries(),
  });
  readonly redisReads = new Counter({
    name: 'streamgate_relay_redis_reads_total',
    help: 'Redis read commands issued',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly redisErrors = new Counter({
    name: 'streamgate_relay_redis_errors_total',
    help: 'Redis errors by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly redisReconnects = new Counter({
    name: 'streamgate_relay_redis_reconnects_total',
    help: 'Redis connections ready again after a loss, by role (command or reader)',
    labelNames: ['connection'] as const,
    registers: [this.registry],
  });
  readonly redisStreamResets = new Counter({
    name: 'streamgate_relay_redis_stream_resets_total',
    help: 'Watched streams read again from their start, their subscribers sent stream_reset, by cause: recreated (the key was deleted and written again) or lost_in_failover (entries the relay delivered are gone from the server)',
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });
  readonly jetStreamReads = new Counter({
    name: 'streamgate_relay_jetstream_reads_total',
    help: 'JetStream requests issued by the JetStream sources, by kind (get: a message by sequence; info: stream info)',
    labelNames: ['target', 'kind'] as const,
    registers: [this.registry],
  });
  readonly jetStreamErrors = new Counter({
    name: 'streamgate_relay_jetstream_errors_total',
    help: 'JetStream source errors by target and operation (connection, read, check, live, republish)',
    labelNames: ['target', 'operation'] as const,
    registers: [this.registry],
  });
  readonly jetStreamStreamResets = new Counter({
    name: 'streamgate_relay_jetstream_stream_resets_total',
    help: 'Watched streams on a JetStream target read again from their start, their subscribers sent stream_reset, by cause (recreated, sequence_fell, unknown_position)',
    labelNames: ['target', 'cause'] as const,
    registers: [this.registry],
  });
  readonly jetStreamReconnects = new Counter({
    name: 'streamgate_relay_jetstream_reconnects_total',
    help: 'NATS connections of JetStream sources back after a loss',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });
  readonly readMode = new Gauge({
    name: 'streamgate_relay_read_mode',
    help: 'Live read mode per Redis target: 1 for the mode in force (notify: woken by keyspace notifications; batch: blocking XREAD)',
    labelNames: ['target', 'mode'] as const,
    registers: [this.registry],
  });
  // Keyspace events are node-local on a Redis Cluster: a primary without K and t is read by the sweep only.
  readonly clusterNodesWithoutNotify = new Gauge({
    name: 'streamgate_relay_cluster_nodes_without_notify',
    help: 'Primaries of a Redis Cluster target whose notify-keyspace-events lacks K or t (their keys are read by the sweep only)',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });
  readonly redisTargetUp = new Gauge({
    name: 'streamgate_relay_redis_target_up',
    help: 'Per allowlisted Redis target: 1 while it answers (connected, PING answered within the probe timeout), else 0',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });
  readonly redisTargetsDown = new Counter({
    name: 'streamgate_relay_redis_target_down_total',
    help: 'Times a Redis target stayed unreachable for RELAY_REDIS_DOWN_AFTER_MS and its subscriptions were ended with stream_unavailable',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: 'streamgate_relay_auth_failures_total',
    help: 'Refused tokens by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly frameErrors = new Counter({
    name: 'streamgate_relay_frame_errors_total',
    help: 'Error frames sent to clients, by code (token refusals are also in auth_failures_total)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly malformedEntries = new Counter({
    name: 'streamgate_relay_malformed_entries_total',
    help: 'Stream entries not in the entry format',
    registers: [this.registry],
  });
  readonly catchUpPages = new Counter({
    name: 'streamgate_relay_catchup_pages_total',
    help: 'Catch-up XRANGE pages read',
    registers: [this.registry],
  });
  readonly slowConsumerCuts = new Counter({
    name: 'streamgate_relay_slow_consumer_cuts_total',
    help: 'Sockets closed because their send buffer passed the limit',
    registers: [this.registry],
  });
  readonly limitBreaches = new Counter({
    name: 'streamgate_relay_limit_breaches_total',
    help: 'Limit breaches by limit: frame_size, subscriptions, connections, connection_rate, pending_catchup (paused, not cut)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly refreshes = new Counter({
    name: 'streamgate_relay_token_refreshes_total',
    help: 'Token refresh outcomes',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly recoveries = new Counter({
    name: 'streamgate_relay_recoveries_total',
    help: 'Subscription starts by recovery outcome',
    labelNames: ['recovery'] as const,
    registers: [this.registry],
  });
  readonly draining = new Gauge({
    name: 'streamgate_relay_draining',
    help: '1 once the pod is draining (SIGTERM), else 0',
    registers: [this.registry],
  });
  readonly drainNotices = new Counter({
    name: 'streamgate_relay_drain_notices_total',
    help: 'Connections sent a reconnect notice and closed with 4000 during a drain',
    registers: [this.registry],
  });
  readonly drainRefused = new Counter({
    name: 'streamgate_relay_drain_refused_total',
    help: 'New connections closed with 4002 (try another pod) because the pod is draining',
    registers: [this.registry],
  });

  // Liveness, key reloads and revocation (docs/protocol.md §8 "Liveness", §10).
  readonly pingTimeouts = new Counter({
    name: 'streamgate_relay_ping_timeouts_total',
    help: 'Sockets closed with 4006 because nothing arrived for a whole ping interval after a ping',
    registers: [this.registry],
  });
  readonly keyReloads = new Counter({
    name: 'streamgate_relay_jwks_file_reloads_total',
    help: 'RELAY_JWKS_FILE re-reads by outcome (loaded; invalid: the file did not parse and the keys in force were kept)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly signingKeys = new Gauge({
    name: 'streamgate_relay_signing_key',
    help: '1 for each kid of the signing keys this pod verifies with now (RELAY_JWKS_URL or RELAY_JWKS_FILE)',
    labelNames: ['kid'] as const,
    registers: [this.registry],
  });
  readonly revocationsEnded = new Counter({
    name: 'streamgate_relay_revoked_subscriptions_total',
    help: 'Subscriptions ended with unsubscribed revoked because a revocation matched their token',
    registers: [this.registry],
  });
  readonly revocationsInvalid = new Counter({
    name: 'streamgate_relay_revocation_records_invalid_total',
    help: 'Revocation records read from Redis that did not parse (ignored)',
    registers: [this.registry],
  });
  readonly revocationsHeld = new Gauge({
    name: 'streamgate_relay_revocations',
    help: 'Revocation records in force on this pod, over all targets',
    registers: [this.registry],
  });

  readonly opsPublishes = new Counter({
    name: 'streamgate_relay_ops_snapshots_total',
    help: 'Operations snapshots written to the operations stream',
    registers: [this.registry],
  });
  readonly opsPublishFailures = new Counter({
    name: 'streamgate_relay_ops_snapshot_failures_total',
    help: 'Operations snapshots not written, by cause (sink_failed: Redis; collect_failed: collecting it threw; too_large, invalid_snapshot: a bug)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  /** Demand heartbeats, per Redis target they go to. */
  readonly demand = new DemandMetrics(this.registry);
  /**
   * The refusal counts of the operations snapshot, from the same increments as the metrics:
   * error frame codes as sent, and `close:<CloseCode name>` for connections the relay closed.
   */
  readonly refusals = new RefusalTally();
  #deliveriesTotal = 0;
  /**
   * Deliveries not yet added to `deliveries`: one is counted per entry published, and a labelled
   * increment costs a label lookup each time; a scrape adds them up first (the counter's collect).
   */
  readonly #unfolded = { live: 0, 'catch-up': 0 };

  constructor() {
    // The event-loop lag histogram samples on a timer of its own, and every wake-up of the loop
    // costs the pod: at prom-client's 10 ms it was a third of an idle relay's CPU (1,000 sockets on
    // 10,000 streams). At 100 ms, stalls that matter (tens of ms and up) still show.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
    // Both causes show from the start, at 0: an alert on a rise needs the series to exist.
    for (const cause of STREAM_RESET_CAUSES) this.redisStreamResets.inc({ cause }, 0);
  }

  private foldDeliveries(): void {
    for (const path of ['live', 'catch-up'] as const) {
      const count = this.#unfolded[path];
      if (count === 0) continue;
      this.#unfolded[path] = 0;
      this.deliveries.inc({ path }, count);
    }
  }

  /** streamgate_relay_deliveries_total, readable synchronously. */
  get deliveriesTotal(): number {
    return this.#deliveriesTotal;
  }

  /** An error frame sent to a client (token refusals included: they are also in authFailures). */
  frameError(code: ErrorCode): void {
    this.frameErrors.inc({ code });
    this.refusals.add(code);
  }

  limitBreach(limit: 'frame_size' | 'subscriptions' | 'connections' | 'connection_rate' | 'protocol_violation' | 'pending_catchup'): void {
    this.limitBreaches.inc({ limit });
    const closed = CLOSING_LIMITS[limit];
    if (closed !== undefined) this.refusals.add(`close:${closed}`);
  }

  /** A socket closed with 4006 for silence. */
  pingTimeout(): void {
    this.pingTimeouts.inc();
    this.refusals.add('close:pingTimeout');
  }

  slowConsumerCut(): void {
    this.slowConsumerCuts.inc();
    this.refusals.add('close:slowConsumer');
  }

  /** A new connection closed with 4002 because the pod is draining. */
  drainRefusal(): void {
    this.drainRefused.inc();
    this.refusals.add('close:tryAnotherPod');
  }

  readonly hub: HubMetrics = {
    delivered: (count, path) => {
      this.#unfolded[path] += count;
      this.#deliveriesTotal += count;
    },
    malformedEntry: () => this.malformedEntries.inc(),
    catchUpPage: () => this.catchUpPages.inc(),
    slowConsumerCut: () => this.slowConsumerCut(),
    catchUpPaused: () => this.limitBreach('pending_catchup'),
    sourceError: (operation) => this.redisErrors.inc({ operation }),
    recovery: (recovery) => this.recoveries.inc({ recovery }),
  };
}
