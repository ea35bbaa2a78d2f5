import type { Logger } from 'pino';
import { CloseCode } from '@streamgate/protocol';
import type { RelayConfig } from './config.js';
import { RelayMetrics } from './RelayMetrics.js';
import { Session } from './Session.js';
import { TokenVerifier } from './auth/TokenVerifier.js';
import { createKeySource } from './auth/createKeySource.js';
import type { TopicPublisher } from './core/Connection.js';
import { StreamHub } from './core/StreamHub.js';
import { startDemandReporter } from './demand/startDemandReporter.js';
import { startUwsServer } from './edge/startUwsServer.js';
import { RedisStreamSource } from './redis/RedisStreamSource.js';

export interface Relay {
  readonly port: number;
  readonly metrics: RelayMetrics;
  isReady(): boolean;
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
  for (const target of config.RELAY_REDIS_ALLOWLIST) {
    let hub: StreamHub | null = null;
    const source = new RedisStreamSource({
      target,
      username: config.RELAY_REDIS_USERNAME,
      password: config.RELAY_REDIS_PASSWORD,
      blockMs: config.RELAY_XREAD_BLOCK_MS,
      readCount: config.RELAY_XREAD_COUNT,
      maxStreamsPerReader: config.RELAY_MAX_STREAMS_PER_READER,
      connectionName: `streamgate-relay:${config.RELAY_NODE_ID}`,
      listener: {
        entries: (stream, entries) => hub?.listener.entries(stream, entries),
        failed: (stream, error) => hub?.listener.failed(stream, error),
      },
      onError: (operation, error) => {
        metrics.redisErrors.inc({ operation });
        log.warn({ err: error, operation, target }, 'redis error');
      },
      onRead: (kind) => metrics.redisReads.inc({ kind }),
    });
    sources.push(source);
    hub = new StreamHub({
      source,
      publisher: topicPublisher,
      metrics: metrics.hub,
      topicPrefix: `${hubs.size}|`,
      catchUpPageSize: config.RELAY_CATCHUP_PAGE_SIZE,
      maxBufferedBytes: config.RELAY_MAX_BACKPRESSURE_BYTES,
      lingerMs: config.RELAY_STREAM_LINGER_MS,
    });
    hubs.set(target, hub);
  }
  const hubFor = (target: string): StreamHub => {
    const hub = hubs.get(target);
    // The verifier only passes allowlisted targets, and every allowlisted target has a hub.
    if (hub === undefined) throw new Error(`no hub for allowlisted target ${target}`);
    return hub;
  };

  const demand = startDemandReporter(config, hubs, log);

  const isReady = (): boolean => keys.loaded() && [...hubs.values()].every((h) => h.healthy);
  const server = await startUwsServer({
    host: config.RELAY_HOST,
    port: config.RELAY_PORT,
    hardMaxPayloadBytes: config.RELAY_MAX_FRAME_BYTES * 4,
    maxBackpressureBytes: config.RELAY_MAX_BACKPRESSURE_BYTES,
    idleTimeoutSeconds: config.RELAY_IDLE_TIMEOUT_SECONDS,
    allowFallback: config.RELAY_ALLOW_UWS_FALLBACK,
    onOpen: (conn) => {
      const session = new Session(conn, {
        verifier,
        hubFor,
        nodeId: config.RELAY_NODE_ID,
        maxFrameBytes: config.RELAY_MAX_FRAME_BYTES,
        maxSubscriptions: config.RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET,
        refreshLeadSeconds: config.RELAY_REFRESH_LEAD_SECONDS,
        metrics,
        log,
      });
      session.open();
      return session;
    },
    http: {
      '/healthz': () => ({ status: 200, contentType: 'text/plain', body: 'ok' }),
      '/readyz': () =>
        isReady()
          ? { status: 200, contentType: 'text/plain', body: 'ready' }
          : { status: 503, contentType: 'text/plain', body: keys.loaded() ? 'redis unavailable' : 'signing keys not loaded' },
      '/metrics': async () => {
        metrics.streams.set([...hubs.values()].reduce((n, h) => n + h.streamCount, 0));
        return { status: 200, contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    },
  });
  publisher = server.publisher;

  return {
    port: server.port,
    metrics,
    isReady,
    redisConnectionCount: () => sources.reduce((n, s) => n + s.connectionCount, 0),
    close: async () => {
      server.close(CloseCode.drainReconnect, 'relay shutting down');
      keys.close();
      demand?.close();
      await Promise.all([...hubs.values()].map((h) => h.close()));
    },
  };
}
