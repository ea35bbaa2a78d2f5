import { connect } from '@nats-io/transport-node';
import type { Clock } from '@streamgate/protocol';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { withTimeout } from './withTimeout.js';
import { toError } from './natsSourceError.js';

export interface NatsLinkOptions {
  readonly servers: readonly string[];
  readonly tls: boolean;
  readonly user?: string;
  readonly pass?: string;
  readonly token?: string;
  readonly name?: string;
  readonly pingIntervalMs: number;
  /** A server that accepts the TCP connection but sends no INFO this long (frozen) is tried no longer. */
  readonly connectTimeoutMs: number;
  readonly clock: Clock;
  readonly onReconnect: () => void;
  readonly onError: (error: Error) => void;
}

type LinkState = 'connecting' | 'connected' | 'disconnected' | 'closed';

/**
 * The source's one NATS connection to a JetStream cluster, given by its seeds (the client learns
 * the other servers from them and reconnects to any, for ever). Built at once, connected in the
 * background: callers wait for it within their own timeout.
 */
export class NatsLink {
  private state: LinkState = 'connecting';
  private readonly opened: Promise<NatsConnection>;

  constructor(private readonly options: NatsLinkOptions) {
    const connection: ConnectionOptions = {
      servers: [...options.servers],
      ...(options.tls ? { tls: {} } : {}),
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.pass === undefined ? {} : { pass: options.pass }),
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.name === undefined ? {} : { name: options.name }),
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      // A frozen server answers no PING: after three the client leaves it for another.
      pingInterval: options.pingIntervalMs,
      maxPingOut: 3,
      timeout: options.connectTimeoutMs,
    };
    this.opened = connect(connection).then((nc) => this.opening(nc));
    // Rejections are answered to whoever awaits `connection`; one is always kept here too.
    this.opened.catch((thrown: unknown) => options.onError(toError(thrown)));
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  /** The connection once open; rejects after `timeoutMs` while it is not. */
  async connection(timeoutMs: number): Promise<NatsConnection> {
    if (this.state === 'closed') throw new Error('the NATS connection is closed');
    return withTimeout(this.options.clock, this.opened, timeoutMs, 'the NATS connection did not open');
  }

  /** The connection once open, however long that takes (what is set up once, not asked per request). */
  whenOpen(): Promise<NatsConnection> {
    return this.opened;
  }

  async close(): Promise<void> {
    const previous = this.state;
    this.state = 'closed';
    if (previous === 'connecting') {
      // Closes it once it opens. A connect that failed was reported by the constructor's handler.
      void this.opened.then(
        (nc) => nc.close(),
        () => undefined,
      );
      return;
    }
    const nc = await this.opened;
    await nc.close();
  }

  private opening(nc: NatsConnection): NatsConnection {
    if (this.state === 'closed') {
      void nc.close();
      return nc;
    }
    this.state = 'connected';
    void this.watchStatus(nc);
    return nc;
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.state === 'closed') return;
      // Other statuses (reconnecting, ping, cluster updates, lame duck) change nothing here:
      // the client moves on by itself, and a move shows as disconnect then reconnect.
      if (status.type === 'disconnect') {
        this.state = 'disconnected';
        this.options.onError(new Error(`disconnected from ${status.server}`));
      } else if (status.type === 'reconnect') {
        this.state = 'connected';
        this.options.onReconnect();
      } else if (status.type === 'error') {
        this.options.onError(status.error);
      }
    }
  }
}
