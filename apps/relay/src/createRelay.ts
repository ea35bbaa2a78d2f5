import type { Logger } from 'pino';
import { CloseCode } from '@streamgate/protocol';
import type { RelayConfig } from './config.js';
import { Drainer } from './Drainer.js';
import type { DrainOutcome } from './Drainer.js';
import { RelayMetrics } from './RelayMetrics.js';
import { Session } from './Session.js';
import { TokenVerifier } from './auth/TokenVerifier.js';
import { createKeySource } from './auth/createKeySource.js';
import type { TopicPublisher } from './core/Connection.js';
import { StreamHub } from './core/StreamHub.js';
import { startDemandReporter } from './demand/startDemandReporter.js';
import { watchTargets } from './watchTargets.js';
import { startUwsServer } from './edge/startUwsServer.js';
import type { SocketHandlers } from './edge/startUwsServer.js';
import { AdmissionControl } from './limits/AdmissionControl.js';
import { SlowConsumerGuard } from './limits/SlowConsumerGuard.js';
import { startRelayOpsPublisher } from './ops/startRelayOpsPublisher.js';
import type { RelayReadModeState } from './ops/RelaySnapshotCollector.js';
import type { RedisStreamSource } from './redis/RedisStreamSource.js';
import { openTargetSource } from './openTargetSource.js';

export interface Relay {
  readonly port: number;
  readonly metrics: RelayMetrics;
  isReady(): boolean;
  /**
   * SIGTERM: readiness fails, new connections are refused with 4002, and each open one is sent
   * its reconnect notice after a uniform delay over the drain window. Resolves when the last
   * connection is gone or at the deadline; call close() after.
   */
  drain(): Promise<DrainOutcome>;
  /** A second signal: what is left of the drain is spread over the fast window instead. */
  hurryDrain(): void;
  /** Redis connections this pod holds, over all targets. */
  redisConnectionCount(): number;
  close(): Promise<void>;
}

/** Wires config, keys, Redis sources, the fan-out hubs and the uWS edge into one relay. */
export async function createRelay(config: RelayConfig, log: Logger): Promise<Relay> {
  const metrics = new RelayMetrics();
  const keys = createKeySource(
    config.RELAY_JWKS_URL !== undefined
      ? { kind: 'remote', url: config.RELAY_JWKS_URL, refreshSeconds: config.RELAY_JWKS_REFRESH_SECONDS }
      : { kind: 'file', path: config.RELAY_JWKS_FILE ?? '' },
    (error) => log.warn({ err: error }, 'jwks fetch failed'),
  );
  const verifier = new TokenVerifier({
    keys: keys.getKey,
    algorithms: config.RELAY_TOKEN_ALGORITHMS,
    audience: config.RELAY_TOKEN_AUDIENCE,
    issuer: config.RELAY_TOKEN_ISSUER,
    clockSkewSeconds: config.RELAY_CLOCK_SKEW_SECONDS,
    redisAllowlist: config.RELAY_REDIS_ALLOWLIST,
  });

  // The publisher exists once the server listens; hubs are built before, so route through a holder.
  let publisher: TopicPublisher | null = null;
  const topicPublisher: TopicPublisher = {
    publish: (topic, frame) => publisher?.publish(topic, frame),
    subscriberCount: (topic) => publisher?.subscriberCount(topic) ?? 0,
  };

  const hubs = new Map<string, StreamHub>();
  const sources: RedisStreamSource[] = [];
  const readModes = new Map<string, RelayReadModeState>();
  for (const target of config.RELAY_REDIS_ALLOWLIST) {
    let hub: StreamHub | null = null;
    readModes.set(target, 'pending');
    const source = openTargetSource(config, target, metrics, log, {
      entries: (stream, entries) => hub?.listener.entries(stream, entries),
      failed: (stream, error) => hub?.listener.failed(stream, error),
      reset: (stream) => hub?.listener.reset(stream),
      onReadMode: (mode) => readModes.set(target, mode),
    });
    sources.push(source);
    hub = new StreamHub({
      source,
      publisher: topicPublisher,
      metrics: metrics.hub,
      topicPrefix: `${hubs.size}|`,
      catchUpPageSize: config.RELAY_CATCHUP_PAGE_SIZE,
      maxBufferedBytes: config.RELAY_MAX_BACKPRESSURE_BYTES,
      maxPendingCatchUpBytes: config.RELAY_MAX_PENDING_CATCHUP_BYTES,
      maxEntryBytes: config.RELAY_MAX_ENTRY_BYTES,
      lingerMs: config.RELAY_STREAM_LINGER_MS,
    });
    hubs.set(target, hub);
  }
  if (config.RELAY_READ_MODE === 'notify') await requireNotifications(sources, [...config.RELAY_REDIS_ALLOWLIST], log);
  const hubFor = (target: string): StreamHub => {
    const hub = hubs.get(target);
    // The verifier only passes allowlisted targets, and every allowlisted target has a hub.
    if (hub === undefined) throw new Error(`no hub for allowlisted target ${target}`);
    return hub;
  };

  const admission = new AdmissionControl({
    maxConnections: config.RELAY_MAX_CONNECTIONS,
    maxConnectionsPerSecond: config.RELAY_MAX_CONNECTIONS_PER_SECOND,
  });
  const slowConsumers = new SlowConsumerGuard({
    maxBufferedBytes: config.RELAY_MAX_BACKPRESSURE_BYTES,
    checkIntervalMs: config.RELAY_SLOW_CONSUMER_CHECK_MS,
    onCut: (buffered) => {
      metrics.slowConsumerCut();
      log.debug({ buffered }, 'slow consumer cut');
    },
  });
  const refused: SocketHandlers = { onText: () => undefined, onBinary: () => undefined, onClose: () => undefined };
  const drainer = new Drainer<Session>({
    windowMs: config.RELAY_DRAIN_WINDOW_MS,
    fastWindowMs: config.RELAY_DRAIN_FAST_WINDOW_MS,
    deadlineMs: config.RELAY_DRAIN_DEADLINE_MS,
  });
  const targets = watchTargets({ hubs, downAfterMs: config.RELAY_REDIS_DOWN_AFTER_MS, metrics, log });
  // One target down never takes the pod out of the load balancer: another pod could not read it
  // either. A pod that reaches none of its targets has a fault of its own, and taking it out helps.
  const isReady = (): boolean => !drainer.draining && keys.loaded() && targets.anyHealthy();
  const demand = startDemandReporter(config, hubs, log);
  const server = await startUwsServer({
    host: config.RELAY_HOST,
    port: config.RELAY_PORT,
    hardMaxPayloadBytes: config.RELAY_MAX_FRAME_BYTES * 4,
    // uWS's own cut (no close frame) is only the backstop behind the guard's 4001.
    maxBackpressureBytes: config.RELAY_MAX_BACKPRESSURE_BYTES * 4,
    idleTimeoutSeconds: config.RELAY_IDLE_TIMEOUT_SECONDS,
    allowFallback: config.RELAY_ALLOW_UWS_FALLBACK,
    onOpen: (conn) => {
      if (drainer.draining) {
        // Load balancers take a while to act on a failed readiness probe; whoever still
        // arrives is sent on at once rather than joining a pod that is about to send it away.
        metrics.drainRefusal();
        conn.close(CloseCode.tryAnotherPod, 'relay draining: connect to another pod');
        return refused;
      }
      const admitted = admission.admit();
      if (!admitted.ok) {
        metrics.limitBreach(admitted.limit);
        conn.close(admitted.code, admitted.reason);
        return refused;
      }
      slowConsumers.add(conn);
      const session = new Session(conn, {
        verifier,
        hubFor,
        nodeId: config.RELAY_NODE_ID,
        maxFrameBytes: config.RELAY_MAX_FRAME_BYTES,
        maxSubscriptions: config.RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET,
        refreshLeadSeconds: config.RELAY_REFRESH_LEAD_SECONDS,
        clockSkewSeconds: config.RELAY_CLOCK_SKEW_SECONDS,
        metrics,
        log,
      });
      session.open();
      drainer.track(session);
      return {
        onText: (text, byteLength) => session.onText(text, byteLength),
        onBinary: () => session.onBinary(),
        onClose: () => {
          admission.release();
          slowConsumers.delete(conn);
          session.onClose();
          drainer.untrack(session);
        },
      };
    },
    http: {
      '/healthz': () => ({ status: 200, contentType: 'text/plain', body: 'ok' }),
      '/readyz': () =>
        isReady()
          ? { status: 200, contentType: 'text/plain', body: `ready\n${targets.describe()}` }
          : { status: 503, contentType: 'text/plain', body: `${notReadyReason()}\n${targets.describe()}` },
      '/metrics': async () => {
        metrics.streams.set([...hubs.values()].reduce((n, h) => n + h.streamCount, 0));
        targets.check();
        return { status: 200, contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    },
  });
  publisher = server.publisher;
  const ops =
    config.RELAY_OPS_REDIS_URL === undefined
      ? null
      : startRelayOpsPublisher({
          redisUrl: config.RELAY_OPS_REDIS_URL,
          stream: config.RELAY_OPS_STREAM,
          username: config.RELAY_REDIS_USERNAME,
          password: config.RELAY_REDIS_PASSWORD,
          metrics,
          log,
          state: {
            pod: config.RELAY_NODE_ID,
            startedAt: Math.round(performance.timeOrigin),
            ready: isReady,
            connections: () => drainer.openCount,
            subscriptions: () => [...hubs.values()].reduce((n, h) => n + h.subscriberCount, 0),
            streamsWatched: () => [...hubs.values()].reduce((n, h) => n + h.streamCount, 0),
            deliveriesTotal: () => metrics.deliveriesTotal,
            refusals: () => metrics.refusals.entries(),
            readModes: () => [...readModes].map(([target, mode]) => ({ target, mode })),
            drain: () => drainer.schedule,
          },
        });

  function notReadyReason(): string {
    if (drainer.draining) return 'draining';
    return keys.loaded() ? 'no redis target reachable' : 'signing keys not loaded';
  }

  return {
    port: server.port,
    metrics,
    isReady,
    drain: async () => {
      if (!drainer.draining) {
        metrics.draining.set(1);
        log.info(
          { connections: drainer.openCount, windowMs: config.RELAY_DRAIN_WINDOW_MS, deadlineMs: config.RELAY_DRAIN_DEADLINE_MS },
          'draining',
        );
      }
      const outcome = await drainer.start();
      log.info({ outcome, elapsedMs: drainer.elapsed(), left: drainer.openCount, late: drainer.lateness() }, 'drain over');
      await ops?.publishLast();
      return outcome;
    },
    hurryDrain: () => {
      if (!drainer.draining) return;
      log.info({ connections: drainer.openCount, fastWindowMs: config.RELAY_DRAIN_FAST_WINDOW_MS }, 'drain hurried');
      drainer.hurry();
    },
    redisConnectionCount: () => sources.reduce((n, s) => n + s.connectionCount, 0),
    close: async () => {
      server.close(CloseCode.drainReconnect, 'relay shutting down');
      targets.close();
      slowConsumers.close();
      keys.close();
      demand?.close();
      await Promise.all([...hubs.values()].map((h) => h.close()).concat(ops === null ? [] : [ops.close()]));
    },
  };
}

/**
 * `RELAY_READ_MODE=notify` promises Redis a cost per entry that does not grow with the streams
 * watched; a target that answers it cannot notify must stop the start, not quietly cost more.
 * One that cannot be reached yet starts batched and switches once it answers.
 */
async function requireNotifications(sources: readonly RedisStreamSource[], targets: readonly string[], log: Logger): Promise<void> {
  const answers = await Promise.all(sources.map((s) => s.firstReadModeCheck()));
  const refused = targets.filter((_, i) => answers[i] === 'batch');
  if (refused.length > 0) {
    await Promise.all(sources.map((s) => s.close()));
    throw new Error(
      `RELAY_READ_MODE=notify, but ${refused.join(', ')} does not notify for stream keys (or refuses CONFIG GET): set notify-keyspace-events to include K and t on that server (CONFIG SET notify-keyspace-events Kt, or in redis.conf), or set RELAY_READ_MODE=auto`,
    );
  }
  const unknown = targets.filter((_, i) => answers[i] === null);
  if (unknown.length > 0)
    log.warn({ targets: unknown }, 'RELAY_READ_MODE=notify: target not reachable yet; read in batches until it answers');
}
