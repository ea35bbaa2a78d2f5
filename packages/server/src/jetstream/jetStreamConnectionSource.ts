import { jetstream } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { AuthorizationError, connect, UserAuthenticationExpiredError } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_JETSTREAM_STREAM, parseJetStreamTarget } from '@streamgate/protocol';
import type { JetStreamTargetAddress } from '@streamgate/protocol';
import { errorText } from '../PublishError.js';
import { timeoutAfter } from '../timeoutAfter.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';

/** Credentials for a writer that opens its own connection (targets carry none). */
export type JetStreamCredentials = { user: string; pass: string } | { token: string };

/** Where a writer publishes: exactly one of a connection and a target. */
export type JetStreamConnectionOptions =
  | {
      /** A connected NATS connection; the writer never closes it. */
      connection: NatsConnection;
      /** The JetStream stream holding the per-task subjects; default STREAMGATE. */
      stream?: string;
      target?: never;
    }
  | {
      /** `nats://h:p,h:p/STREAM` (`tls://` for TLS), or its parsed address. Opened on the first publish, closed by close(). */
      target: string | JetStreamTargetAddress;
      credentials?: JetStreamCredentials;
      /** The connection's name as the servers list it; default `streamgate-publisher`. */
      connectionName?: string;
      connection?: never;
    };

/** The JetStream client to publish with, or why there is none within the wait. */
export type ClientReady = { ok: true; js: JetStreamClient } | { ok: false; error: JetStreamPublishError };

/** Where a writer's JetStream client comes from: a connection it was given, or one it owns. */
export interface JetStreamConnectionSource {
  readonly stream: string;
  client(timeoutMs: number): Promise<ClientReady>;
  close(): Promise<void>;
}

/** `timeoutMs`: the JetStream client's default request timeout (publishes pass their own). */
export function jetStreamConnectionSource(options: JetStreamConnectionOptions, timeoutMs: number): JetStreamConnectionSource {
  // From plain JavaScript: name what is wrong rather than fail reading a property of undefined.
  const given = options as { connection?: unknown; target?: unknown };
  if ((given.connection === undefined) === (given.target === undefined)) {
    throw new TypeError(
      `createJetStreamWriter needs exactly one of connection (a NatsConnection) and target (a nats:// URL); got ${given.connection === undefined ? 'neither' : 'both'}`,
    );
  }
  if (options.connection !== undefined) {
    const stream = options.stream ?? DEFAULT_JETSTREAM_STREAM;
    // The target grammar owns the rule for JetStream stream names; reuse it rather than copy it.
    if (parseJetStreamTarget(`nats://localhost/${stream}`) === null)
      throw new TypeError(`not a JetStream stream name: ${JSON.stringify(stream)}`);
    return givenConnection(options.connection, stream, timeoutMs);
  }
  const target = options.target;
  const address = typeof target === 'string' ? parseJetStreamTarget(target) : target;
  if (address === null) throw new TypeError(`not a JetStream target (nats://host:port[,host:port…]/STREAM): ${JSON.stringify(target)}`);
  return ownedConnection(address, options.credentials, options.connectionName ?? 'streamgate-publisher', timeoutMs);
}

function givenConnection(nc: NatsConnection, stream: string, timeoutMs: number): JetStreamConnectionSource {
  const js = jetstream(nc, { timeout: timeoutMs });
  return {
    stream,
    client() {
      if (nc.isClosed() || nc.isDraining()) {
        return Promise.resolve({
          ok: false,
          error: { code: 'closed', retryable: false, written: 'no', message: 'the NATS connection given to the writer is closed' },
        });
      }
      return Promise.resolve({ ok: true, js });
    },
    close: () => Promise.resolve(),
  };
}

function ownedConnection(
  address: JetStreamTargetAddress,
  credentials: JetStreamCredentials | undefined,
  name: string,
  timeoutMs: number,
): JetStreamConnectionSource {
  let pending: Promise<NatsConnection> | null = null;
  let js: JetStreamClient | null = null;
  let closing = false;

  function open(): Promise<NatsConnection> {
    pending ??= connect({
      servers: [...address.servers],
      name,
      ...(address.tls ? { tls: {} } : {}),
      ...credentials,
      // Once connected, the client rides out node restarts on its own; a publish meanwhile ends
      // as `timeout` and is retried by the caller.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    }).then(
      (nc) => {
        js = jetstream(nc, { timeout: timeoutMs });
        return nc;
      },
      (error: unknown) => {
        // The next publish tries again; this one reports the failure.
        pending = null;
        throw error;
      },
    );
    return pending;
  }

  return {
    stream: address.stream,
    async client(waitMs) {
      const timer = timeoutAfter(waitMs);
      try {
        const outcome = await Promise.race([
          open().then(
            () => 'open' as const,
            (error: unknown) => error,
          ),
          timer.promise,
        ]);
        if (outcome === 'open' && js !== null) return { ok: true, js };
        // A refused login is configuration to fix, not an outage to wait out.
        if (outcome instanceof AuthorizationError || outcome instanceof UserAuthenticationExpiredError) {
          const message = `the NATS servers refused the login (${errorText(outcome)}); nothing was sent`;
          return { ok: false, error: { code: 'jetstream_unauthorized', retryable: false, written: 'no', message } };
        }
        const why = outcome === 'timeout' ? `no connection to ${address.servers.join(',')} within ${waitMs} ms` : errorText(outcome);
        return { ok: false, error: { code: 'jetstream_unavailable', retryable: true, written: 'no', message: `${why}; nothing was sent` } };
      } finally {
        timer.clear();
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      if (pending === null) return;
      // A failed open was already answered to the publish that waited for it: nothing to close.
      const [opened] = await Promise.allSettled([pending]);
      if (opened.status === 'fulfilled' && !opened.value.isClosed()) await opened.value.drain();
    },
  };
}
