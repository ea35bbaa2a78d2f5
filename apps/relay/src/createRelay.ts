import type { Logger } from 'pino';
import { CloseCode } from '@streamgate/protocol';
import type { RelayConfig } from './config.js';
import { Drainer } from './Drainer.js';
import type { DrainOutcome } from './Drainer.js';
import { RelayMetrics } from './RelayMetrics.js';
import { Session } from './Session.js';
import type { SessionDeps } from './Session.js';
import { TokenVerifier } from './auth/TokenVerifier.js';
import { createKeySource } from './auth/createKeySource.js';
import type { StreamHub } from './core/StreamHub.js';
import { startDemandReporter } from './demand/startDemandReporter.js';
import { watchTargets } from './watchTargets.js';
import { createUwsApp, startUwsServer } from './edge/startUwsServer.js';
import type { SocketHandlers } from './edge/startUwsServer.js';
import { AdmissionControl } from './limits/AdmissionControl.js';
import { SlowConsumerGuard } from './limits/SlowConsumerGuard.js';
import { startRelayOpsPublisher } from './ops/startRelayOpsPublisher.js';
import type { RedisStreamSource } from './redis/RedisStreamSource.js';
import { openTargetHubs } from './openTargetHubs.js';
import { systemClock } from '@streamgate/protocol';
import { LivenessSweep } from './liveness/LivenessSweep.js';
import { RevocationList } from './revocation/RevocationList.js';
import { RevokingVerifier } from './revocation/RevokingVerifier.js';
import { startRevocationFeed } from './revocation/RedisRevocationFeed.js';

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
      : {
          kind: 'file',
          path: config.RELAY_JWKS_FILE ?? '',
          pollMs: config.RELAY_JWKS_FILE_POLL_MS,
          onReload: (reload) => {
            metrics.keyReloads.inc({ outcome: reload.outcome });
            if (reload.outcome === 'loaded') log.info({ kids: reload.kids }, 'RELAY_JWKS_FILE reloaded');
            else log.error({ problem: reload.message }, 'RELAY_JWKS_FILE changed but is invalid: keeping the keys in force');
          },
        },
    (error) => log.warn({ err: error }, 'signing keys could not be read'),
  );
  const tokens = new TokenVerifier({
    keys: keys.getKey,
    algorithms: config.RELAY_TOKEN_ALGORITHMS,
    audience: config.RELAY_TOKEN_AUDIENCE,
    issuer: config.RELAY_TOKEN_ISSUER,
    clockSkewSeconds: config.RELAY_CLOCK_SKEW_SECONDS,
    redisAllowlist: new Set([...config.RELAY_REDIS_ALLOWLIST, ...config.RELAY_JETSTREAM_ALLOWLIST]),
  });
  // Revocation (docs/protocol.md §10): refused at subscribe and refresh, and live subscriptions
  // it covers are ended as each record arrives.
  const revocations = new RevocationList(systemClock, config.RELAY_CLOCK_SKEW_SECONDS * 1000);
  const verifier = new RevokingVerifier(tokens, revocations);
  const sessions = new Set<Session>();
  let revokedTotal = 0;
  const revocationFeed = startRevocationFeed({
    targets: [...config.RELAY_REDIS_ALLOWLIST],
    username: config.RELAY_REDIS_USERNAME,
    password: config.RELAY_REDIS_PASSWORD,
    connectionName: `streamgate-relay:${config.RELAY_NODE_ID}`,
    log,
    onRecord: (record) => {
      if (!revocations.add(record)) return;
      let ended = 0;
      for (const session of sessions) ended += session.revoke(record);
      metrics.revocationsEnded.inc(ended);
      revokedTotal += ended;
      metrics.revocationsHeld.set(revocations.size);
      log.info({ sub: record.sub, stream: record.stream, before: record.before, ended }, 'revocation applied');
    },
    onInvalid: (problem) => {
      metrics.revocationsInvalid.inc();
      log.warn({ problem }, 'unusable revocation record ignored');
    },
  });

  // The app exists before it listens, so the hubs hold its publisher itself.
  const app = createUwsApp();

  const { hubs, redisHubs, redisSources: sources, readModes } = openTargetHubs(config, app.publisher, metrics, log);
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
  const liveness = new LivenessSweep({
    clock: systemClock,
    intervalMs: config.RELAY_PING_INTERVAL_MS,
    onTimeout: () => metrics.pingTimeout(),
  });
  const refused: SocketHandlers = {
    onText: () => undefined,
    onBinary: () => undefined,
    onControl: () => undefined,
    onClose: () => undefined,
  };
  const drainer = new Drainer<Session>({
    windowMs: config.RELAY_DRAIN_WINDOW_MS,
    fastWindowMs: config.RELAY_DRAIN_FAST_WINDOW_MS,
    deadlineMs: config.RELAY_DRAIN_DEADLINE_MS,
  });
  // One deps object for every session: a literal per socket would be held by each idle one.
  const sessionDeps: SessionDeps = {
    verifier,
    hubFor,
    nodeId: config.RELAY_NODE_ID,
    maxFrameBytes: config.RELAY_MAX_FRAME_BYTES,
    maxSubscriptions: config.RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET,
    refreshLeadSeconds: config.RELAY_REFRESH_LEAD_SECONDS,
    clockSkewSeconds: config.RELAY_CLOCK_SKEW_SECONDS,
    metrics,
    log,
    pingIntervalMs: config.RELAY_PING_INTERVAL_MS,
    liveness,
    onClosed: (session, conn) => {
      sessions.delete(session);
      admission.release();
      slowConsumers.delete(conn);
      drainer.untrack(session);
    },
  };
  const targets = watchTargets({ hubs, downAfterMs: config.RELAY_REDIS_DOWN_AFTER_MS, metrics, log });
  // One target down never takes the pod out of the load balancer: another pod could not read it
  // either. A pod that reaches none of its targets has a fault of its own, and taking it out helps.
  const isReady = (): boolean => !drainer.draining && keys.loaded() && targets.anyHealthy();
  // Demand keys live in Redis: a Redis target's in its own, every JetStream target's in
  // RELAY_JETSTREAM_DEMAND_TARGET (docs/protocol.md §17, "What stays in Redis").
  const jetStreamHubs = new Map([...hubs].filter(([target]) => !redisHubs.has(target)));
  const demand = startDemandReporter(config, { redis: redisHubs, jetStream: jetStreamHubs }, metrics.demand, log);
  const server = await startUwsServer({
    app,
    host: config.RELAY_HOST,
    port: config.RELAY_PORT,
    hardMaxPayloadBytes: config.RELAY_MAX_FRAME_BYTES * 4,
    // uWS's own cut (no close frame) is only the backstop behind the guard's 4001.
    maxBackpressureBytes: config.RELAY_MAX_BACKPRESSURE_BYTES * 4,
    idleTimeoutSeconds: config.RELAY_IDLE_TIMEOUT_SECONDS,
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
      const session = new Session(conn, sessionDeps);
      session.open();
      drainer.track(session);
      sessions.add(session);
      // The session is the socket's handlers: no per-socket closures to hold.
      return session;
    },
    http: {
      '/healthz': () => ({ status: 200, contentType: 'text/plain', body: 'ok' }),
      '/readyz': () =>
        isReady()
          ? { status: 200, contentType: 'text/plain', body: `ready\n${targets.describe()}` }
          : { status: 503, contentType: 'text/plain', body: `${notReadyReason()}\n${targets.describe()}` },
      '/metrics': async () => {
        metrics.streams.set([...hubs.values()].reduce((n, h) => n + h.streamCount, 0));
        metrics.revocationsHeld.set(revocations.size);
        metrics.signingKeys.reset();
        for (const kid of keys.kids()) metrics.signingKeys.set({ kid }, 1);
        targets.check();
        return { status: 200, contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    },
  });
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
            drainOutcome: () => drainer.outcome,
            revocations: () => ({ held: revocations.size, ended: revokedTotal }),
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
      liveness.close();
      await revocationFeed.close();
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
