import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { errorMessage } from '@streamgate/ingest-core';
import type { IngestJetStreamConfig } from './ingestJetStreamConfig.js';

type LinkState = 'connecting' | 'connected' | 'disconnected' | 'closed';

/**
 * The worker's one NATS connection to its JetStream target, opened in the background (a worker
 * boots while NATS is down; its writes answer jetstream_unavailable meanwhile) and reconnecting
 * for ever to any server the seeds lead to. Whether it is connected is logged, exported as
 * `ingest_jetstream_connected` and answered to /readyz.
 */
export class IngestNatsLink {
  /** Resolves once connected; the writer waits on it. */
  readonly connection: Promise<NatsConnection>;
  private state: LinkState = 'connecting';
  private readonly connectedGauge: Gauge;
  private readonly disconnects: Counter;

  constructor(
    private readonly config: IngestJetStreamConfig,
    workerId: string,
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.connectedGauge = new Gauge({
      name: 'ingest_jetstream_connected',
      help: '1 while the NATS connection to the JetStream target the streams are written to is up',
      labelNames: ['target'],
      registers: [registry],
    });
    this.disconnects = new Counter({
      name: 'ingest_jetstream_disconnects_total',
      help: 'Losses of the NATS connection to the JetStream target (the client reconnects by itself)',
      labelNames: ['target'],
      registers: [registry],
    });
    this.connectedGauge.set({ target: config.target }, 0);
    const { address, username, password } = config;
    this.connection = connect({
      servers: [...address.servers],
      ...(address.tls ? { tls: {} } : {}),
      ...(username === undefined ? {} : { user: username }),
      ...(password === undefined ? {} : { pass: password }),
      name: `streamgate-ingest:${workerId}`,
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      // A frozen server answers no PING: after three the client leaves it for another.
      pingInterval: 5_000,
      maxPingOut: 3,
      timeout: 5_000,
    });
    this.connection.then(
      (nc) => this.opened(nc),
      (error: unknown) =>
        log.error({ target: config.target, err: errorMessage(error) }, 'jetstream connection failed for good; no stream is written'),
    );
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  get target(): string {
    return this.config.target;
  }

  async close(): Promise<void> {
    const previous = this.state;
    this.state = 'closed';
    // Still connecting: opened() closes it once it opens. A failed connect was logged.
    if (previous === 'connecting') return;
    await (await this.connection).close();
  }

  private opened(nc: NatsConnection): void {
    if (this.state === 'closed') {
      void nc.close();
      return;
    }
    this.set('connected');
    this.log.info({ target: this.config.target, server: nc.getServer() }, 'jetstream connected');
    void this.watch(nc);
  }

  private set(state: LinkState): void {
    this.state = state;
    this.connectedGauge.set({ target: this.config.target }, state === 'connected' ? 1 : 0);
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.state === 'closed') return;
      if (status.type === 'disconnect') {
        this.set('disconnected');
        this.disconnects.inc({ target: this.config.target });
        this.log.warn({ target: this.config.target, server: status.server }, 'jetstream disconnected; reconnecting');
      } else if (status.type === 'reconnect') {
        this.set('connected');
        this.log.info({ target: this.config.target, server: status.server }, 'jetstream reconnected');
      } else if (status.type === 'error') {
        this.log.warn({ target: this.config.target, err: errorMessage(status.error) }, 'jetstream connection error');
      }
    }
  }
}
