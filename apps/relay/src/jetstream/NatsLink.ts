import { connect } from '@nats-io/transport-node';
import { backoffDelay } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import type { ConnectionOptions, Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
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
  /** Backoff (full jitter) before a new connection once one is refused or closed for good. Default 250 ms doubling to 5 000 ms. */
  readonly reopenBaseMs?: number;
  readonly reopenMaxMs?: number;
  /** The connection came back (the client's own reconnect, or a new connection after a lost one): read everything again. */
  readonly onReconnect: () => void;
  /** A failure worth a log line: at most a few per outage. */
  readonly onError: (error: Error) => void;
  /** Every later failed attempt to open a connection in the same outage: counted, not logged again. */
  readonly onRetry: (error: Error) => void;
}

export type NatsCallback = (error: Error | null, msg: Msg) => void;

/** A subscription kept across connections: made again on every new one. */
export interface LinkSubscription {
  unsubscribe(): void;
}

interface Kept {
  readonly subject: string;
  readonly callback: NatsCallback;
  sub: Subscription | null;
}

/**
 * - `connecting`: a connect is under way (the client tries the seeds until one lets it in).
 * - `open`: connected.
 * - `reconnecting`: the connection was lost and the client is moving to a server by itself.
 * - `down`: the servers refused the login, or the client closed the connection for good: a new
 *   one is opened when `cancel`'s timer fires.
 * - `closed`: the relay closed the link; final.
 */
type LinkState =
  | { readonly kind: 'connecting'; readonly attempt: Promise<NatsConnection> }
  | { readonly kind: 'open'; readonly nc: NatsConnection }
  | { readonly kind: 'reconnecting'; readonly nc: NatsConnection }
  | { readonly kind: 'down'; readonly error: Error; readonly cancel: () => void }
  | { readonly kind: 'closed' };

interface Deferred {
  readonly promise: Promise<NatsConnection>;
  resolve(nc: NatsConnection): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve: (nc: NatsConnection) => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<NatsConnection>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Rejected only by close(), answered to whoever awaits it; nobody may be waiting then.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * The source's NATS connection to a JetStream cluster, given by its seeds (the client learns the
 * other servers from them and reconnects to any by itself). The client gives a connection up for
 * good when the servers refuse its login (a wrong or rotated password) or when it runs out of
 * servers; the link then opens a new one after a full-jitter backoff, for as long as the relay
 * runs, so a fixed password brings the target back without a restart. Subscriptions made here
 * are made again on each new connection, and the new connection is announced as a reconnect:
 * to the source a lost connection and a replaced one look the same.
 */
export class NatsLink {
  private state: LinkState;
  /** A connection has been open before: the next open is a reconnect. */
  private wasOpen = false;
  /** Failed attempts since the connection was last open (the backoff's exponent). */
  private failures = 0;
  /** The outage was logged: later failed attempts are counted only. */
  private outageLogged = false;
  private next = deferred();
  private readonly kept = new Set<Kept>();
  private readonly connectOptions: ConnectionOptions;

  constructor(private readonly options: NatsLinkOptions) {
    this.connectOptions = {
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
    this.state = this.connecting();
  }

  get connected(): boolean {
    return this.state.kind === 'open';
  }

  /** The connection once open; rejects after `timeoutMs` while it is not, and at once while the link is down. */
  async connection(timeoutMs: number): Promise<NatsConnection> {
    const state = this.state;
    switch (state.kind) {
      case 'closed':
        throw new Error('the NATS connection is closed');
      case 'down':
        throw state.error;
      case 'open':
      case 'reconnecting':
        return state.nc;
      case 'connecting':
        return withTimeout(this.options.clock, state.attempt, timeoutMs, 'the NATS connection did not open');
    }
  }

  /** Resolves once a connection is open, however long that takes; rejects only once the link is closed. */
  async whenOpen(): Promise<void> {
    await this.next.promise;
  }

  /** Subscribes on the open connection, and again on every new one, until unsubscribed. */
  subscribe(subject: string, callback: NatsCallback): LinkSubscription {
    const kept: Kept = { subject, callback, sub: null };
    this.kept.add(kept);
    const state = this.state;
    if (state.kind === 'open' || state.kind === 'reconnecting') kept.sub = state.nc.subscribe(subject, { callback });
    return {
      unsubscribe: () => {
        this.kept.delete(kept);
        kept.sub?.unsubscribe();
        kept.sub = null;
      },
    };
  }

  async close(): Promise<void> {
    const previous = this.state;
    this.state = { kind: 'closed' };
    this.next.reject(new Error('the NATS connection is closed'));
    this.kept.clear();
    // A connect under way is closed by opened() once it opens.
    if (previous.kind === 'down') previous.cancel();
    else if (previous.kind === 'open' || previous.kind === 'reconnecting') await previous.nc.close();
  }

  private connecting(): LinkState {
    const attempt = connect(this.connectOptions);
    attempt.then(
      (nc) => this.opened(nc),
      (thrown: unknown) => this.refused(toError(thrown)),
    );
    return { kind: 'connecting', attempt };
  }

  private opened(nc: NatsConnection): void {
    if (this.state.kind === 'closed') {
      void nc.close();
      return;
    }
    this.state = { kind: 'open', nc };
    this.failures = 0;
    this.outageLogged = false;
    for (const kept of this.kept) kept.sub = nc.subscribe(kept.subject, { callback: kept.callback });
    void this.watchStatus(nc);
    void nc.closed().then((error) => this.lost(nc, error));
    this.next.resolve(nc);
    if (this.wasOpen) this.options.onReconnect();
    this.wasOpen = true;
  }

  /** A connect failed (the login refused by every server it reached): another after the backoff. */
  private refused(error: Error): void {
    if (this.state.kind === 'closed') return;
    this.report(error);
    this.down(error);
  }

  /** The client closed an open connection by itself (not close()): it will not reconnect. */
  private lost(nc: NatsConnection, error: Error | void): void {
    const state = this.state;
    if ((state.kind !== 'open' && state.kind !== 'reconnecting') || state.nc !== nc) return;
    const reason = error === undefined ? 'closed by the client' : error.message;
    const lost = new Error(`the NATS connection was given up (${reason}): a new one follows`, { cause: error });
    for (const kept of this.kept) kept.sub = null;
    this.next = deferred();
    this.report(lost);
    this.down(lost);
  }

  private report(error: Error): void {
    if (this.outageLogged) this.options.onRetry(error);
    else this.options.onError(error);
    this.outageLogged = true;
  }

  private down(error: Error): void {
    const delayMs = backoffDelay(this.failures, this.options.reopenBaseMs ?? 250, this.options.reopenMaxMs ?? 5_000);
    this.failures++;
    const cancel = this.options.clock.after(delayMs, () => {
      if (this.state.kind === 'down') this.state = this.connecting();
    });
    this.state = { kind: 'down', error, cancel };
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      const state = this.state;
      if ((state.kind !== 'open' && state.kind !== 'reconnecting') || state.nc !== nc) return;
      // Other statuses (reconnecting, ping, cluster updates, lame duck) change nothing here:
      // the client moves on by itself, and a move shows as disconnect then reconnect.
      if (status.type === 'disconnect') {
        // The loss is logged; a refused attempt of the client's own reconnect shows as another
        // disconnect, counted only.
        if (state.kind === 'open') this.options.onError(new Error(`disconnected from ${status.server}`));
        else this.options.onRetry(new Error(`disconnected from ${status.server}`));
        this.state = { kind: 'reconnecting', nc };
      } else if (status.type === 'reconnect') {
        this.state = { kind: 'open', nc };
        this.outageLogged = false;
        this.options.onReconnect();
      } else if (status.type === 'error') {
        // While reconnecting, the first error (a refused login, with its reason) is the outage's line.
        if (state.kind === 'reconnecting') this.report(status.error);
        else this.options.onError(status.error);
      }
    }
  }
}
