import { createServer, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';
import type { AuthenticateError, Client } from 'aedes';
import type { SessionRegistry } from './SessionRegistry.js';

export interface VenueBrokerOptions {
  appKeys: ReadonlySet<string>;
  sessionsPerKey: number;
  registry: SessionRegistry;
  /** Refuse client ids beyond what MQTT 3.1.1 obliges a server to take (1–23 of [0-9a-zA-Z]), as a server may. */
  strictClientIds: boolean;
  /** Read at each CONNECT, so a change applies to the next connection. */
  connackDelayMs: () => number;
  /** Read at each CONNECT: a return code to refuse this key's CONNECT with before any other check. */
  connectRefusal: (appKey: string | undefined) => number | undefined;
}

/** A CONNECT the venue answered with a non-zero return code. */
export interface VenueSimRefusedConnect {
  clientId: string;
  /** The username the client sent, which is the app key. */
  appKey: string | undefined;
  returnCode: number;
  at: number;
}

export interface VenueBroker {
  readonly port: number;
  /** Every refused CONNECT since start, in order. */
  readonly refused: readonly VenueSimRefusedConnect[];
  /** Closes the connection politely (the broker hangs up; MQTT 3.1.1 has no server DISCONNECT). */
  drop(client: Client): void;
  /** Destroys the TCP socket with a reset: no DISCONNECT, no FIN, the peer sees ECONNRESET. */
  crash(client: Client): void;
  close(): Promise<void>;
}

// aedes' AuthErrorCode is a const enum in its typings, which isolatedModules cannot import.
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;
const GUARANTEED_CLIENT_ID = /^[0-9a-zA-Z]{1,23}$/;
const NOT_AUTHORIZED = 5;

function refusal(message: string, returnCode: number): AuthenticateError {
  return Object.assign<Error, { returnCode: number }>(new Error(message), { returnCode });
}

/**
 * The venue's MQTT side: an in-process aedes broker on a kernel-picked port of 127.0.0.1. It
 * admits a CONNECT whose username is a known app key, up to `sessionsPerKey` live connections per
 * key (a CONNECT reusing a live client id replaces that connection, so it does not count twice),
 * and registers the session as its CONNACK goes out.
 */
export async function startVenueBroker(options: VenueBrokerOptions): Promise<VenueBroker> {
  const { appKeys, sessionsPerKey, registry } = options;
  const broker = await Aedes.createBroker();
  const admitted = new Map<string, Set<Client>>();
  const keyOf = new WeakMap<Client, string>();
  const connackTimers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const refused: VenueSimRefusedConnect[] = [];

  broker.preConnect = (_client, _packet, callback) => {
    const delay = options.connackDelayMs();
    if (delay <= 0) {
      callback(null, true);
      return;
    }
    const timer = setTimeout(() => {
      connackTimers.delete(timer);
      callback(null, true);
    }, delay);
    connackTimers.add(timer);
  };

  broker.authenticate = (client, username, _password, done) => {
    const refuse = (message: string, returnCode: number) => {
      refused.push({ clientId: client.id, appKey: username, returnCode, at: Date.now() });
      done(refusal(message, returnCode), false);
    };
    const forced = options.connectRefusal(username);
    if (forced !== undefined) {
      refuse(`CONNECTs of this app key are refused with return code ${forced} (refuseConnects)`, forced);
      return;
    }
    if (options.strictClientIds && !GUARANTEED_CLIENT_ID.test(client.id)) {
      refuse(`client id ${JSON.stringify(client.id)} is not 1-23 of [0-9a-zA-Z]`, IDENTIFIER_REJECTED);
      return;
    }
    if (username === undefined || !appKeys.has(username)) {
      refuse(`unknown app key ${JSON.stringify(username)}`, BAD_USERNAME_OR_PASSWORD);
      return;
    }
    // Counted from admission, not from CONNACK, so six CONNECTs racing each other cannot all get in.
    const live = admitted.get(username) ?? new Set<Client>();
    admitted.set(username, live);
    const others = [...live].filter((other) => other.id !== client.id && !other.closed).length;
    if (others >= sessionsPerKey) {
      refuse(`app key already has ${sessionsPerKey} sessions`, NOT_AUTHORIZED);
      return;
    }
    live.add(client);
    keyOf.set(client, username);
    client.conn.once('close', () => {
      live.delete(client);
      registry.forget(client);
    });
    done(null, true);
  };

  // aedes emits 'client' on registering the connection, just before it writes the CONNACK, and
  // 'connackSent' one setImmediate after that write: a client quick to call subscribe could beat
  // the latter. 'connackSent' still registers, for a takeover whose old connection was slow to close.
  const register = (client: Client) => {
    const appKey = keyOf.get(client);
    if (appKey !== undefined && !client.closed) registry.register(client, appKey);
  };
  broker.on('client', register);
  broker.on('connackSent', (packet, client) => {
    if (packet.returnCode === 0) register(client);
  });
  // Whatever ended the connection, its subscriptions end with it.
  broker.on('clientDisconnect', (client) => registry.forget(client));

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    port,
    refused,
    drop(client) {
      registry.forget(client);
      client.close();
    },
    crash(client) {
      registry.forget(client);
      const { conn } = client;
      if (conn instanceof Socket) conn.resetAndDestroy();
      else conn.destroy();
    },
    close() {
      closing ??= (async () => {
        for (const timer of connackTimers) clearTimeout(timer);
        connackTimers.clear();
        const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        await new Promise<void>((resolve) => broker.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await listenerClosed;
      })();
      return closing;
    },
  };
}
