import type { HttpResponse, TemplatedApp, us_listen_socket, WebSocket as UwsWebSocket } from 'uWebSockets.js';
import type { TopicPublisher } from '../core/Connection.js';
import { loadUws } from './loadUws.js';
import { UwsConnection } from './UwsConnection.js';
import type { SocketData } from './UwsConnection.js';

/** What the edge asks of the app for each socket. */
export interface SocketHandlers {
  onText(text: string, byteLength: number): void;
  onBinary(): void;
  /** A WebSocket ping or pong control frame from the client (uWS answers pings itself). */
  onControl(): void;
  onClose(): void;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface UwsServerOptions {
  readonly host: string;
  readonly port: number;
  /** Frames above this are cut by uWS itself (socket dropped, the client sees 1006); below it the app answers oversize frames. */
  readonly hardMaxPayloadBytes: number;
  readonly maxBackpressureBytes: number;
  readonly idleTimeoutSeconds: number;
  readonly onOpen: (conn: UwsConnection) => SocketHandlers;
  readonly http: Record<string, () => HttpAnswer | Promise<HttpAnswer>>;
  /** The app to serve (createUwsApp), when its publisher was needed before it listens; default a new one. */
  readonly app?: UwsApp;
}

/** A uWS app not listening yet: its publisher works from the start (a topic nobody holds has no subscribers). */
export interface UwsApp {
  readonly publisher: TopicPublisher;
  /** @internal The uWS app itself, for startUwsServer. */
  readonly app: TemplatedApp;
}

/** A uWS app whose publisher the hubs can hold before the server listens (startUwsServer with `app`). */
export function createUwsApp(): UwsApp {
  // Throws UwsUnavailableError, naming the platform matrix, where there is no native binary.
  const app: TemplatedApp = loadUws().uws.App();
  return {
    app,
    publisher: {
      publish: (topic, frame) => void app.publish(topic, frame, false),
      subscriberCount: (topic) => app.numSubscribers(topic),
    },
  };
}

export interface UwsServer {
  readonly port: number;
  readonly publisher: TopicPublisher;
  /** Stops accepting; open sockets stay until closed. */
  stopListening(): void;
  /** Closes every socket at once with `code` and stops listening. */
  close(code: number, reason: string): void;
  readonly connectionCount: number;
}

/**
 * With loadUws, the only module that uses uWebSockets.js. Everything above it sees Connection,
 * TopicPublisher and plain HTTP answers.
 */
export async function startUwsServer(options: UwsServerOptions): Promise<UwsServer> {
  const uWS = loadUws().uws;
  const { app, publisher } = options.app ?? createUwsApp();
  const handlers = new Map<UwsConnection, SocketHandlers>();

  const controlFrom = (ws: UwsWebSocket<SocketData>): void => {
    const conn = ws.getUserData().conn;
    if (conn !== null) handlers.get(conn)?.onControl();
  };
  app.ws<SocketData>('/v1/ws', {
    maxPayloadLength: options.hardMaxPayloadBytes,
    maxBackpressure: options.maxBackpressureBytes,
    // Publishing past the limit must never skip a socket silently: a skipped frame is a gap.
    closeOnBackpressureLimit: true,
    idleTimeout: options.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    // uWS's own upgrade echoes the offer up to its first comma, an empty or padded token included
    // (`,,,` got an empty header); the protocol defines no subprotocol, so the first real token
    // offered is echoed (a browser fails a handshake that answers none of its offers) and none
    // is answered when none was offered.
    upgrade: (res, req, context) => {
      res.upgrade<SocketData>(
        { conn: null },
        req.getHeader('sec-websocket-key'),
        firstSubprotocol(req.getHeader('sec-websocket-protocol')),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      const conn = new UwsConnection(ws);
      ws.getUserData().conn = conn;
      const socketHandlers = options.onOpen(conn);
      // A socket refused in onOpen (a draining pod) has already run its close handler.
      if (!conn.closed) handlers.set(conn, socketHandlers);
    },
    message: (ws, message, isBinary) => {
      const conn = ws.getUserData().conn;
      const h = conn === null ? undefined : handlers.get(conn);
      if (h === undefined) return;
      // The ArrayBuffer is only valid during this call: decode it now.
      if (isBinary) h.onBinary();
      else h.onText(Buffer.from(message).toString('utf8'), message.byteLength);
    },
    ping: (ws) => controlFrom(ws),
    pong: (ws) => controlFrom(ws),
    close: (ws) => {
      const conn = ws.getUserData().conn;
      if (conn === null) return;
      conn.markClosed();
      handlers.get(conn)?.onClose();
      handlers.delete(conn);
    },
  });

  for (const [path, answer] of Object.entries(options.http)) {
    app.get(path, (res) => {
      let aborted = false;
      res.onAborted(() => (aborted = true));
      void Promise.resolve()
        .then(answer)
        .then(
          (a) => (aborted ? undefined : respond(res, a)),
          (error: unknown) => (aborted ? undefined : respond(res, { status: 500, contentType: 'text/plain', body: String(error) })),
        );
    });
  }
  app.any('/*', (res) => {
    respond(res, { status: 404, contentType: 'text/plain', body: 'not found' });
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (socket === false) reject(new Error(`could not listen on ${options.host}:${options.port}`));
      else resolve(socket);
    });
  });
  const port = uWS.us_socket_local_port(listenSocket);
  let listening = true;
  const stopListening = (): void => {
    if (!listening) return;
    listening = false;
    uWS.us_listen_socket_close(listenSocket);
  };

  return {
    port,
    publisher,
    stopListening,
    close: (code, reason) => {
      stopListening();
      for (const conn of [...handlers.keys()]) conn.close(code, reason);
    },
    get connectionCount() {
      return handlers.size;
    },
  };
}

function respond(res: HttpResponse, answer: HttpAnswer): void {
  res.cork(() => {
    res
      .writeStatus(`${answer.status} ${answer.status === 200 ? 'OK' : 'Error'}`)
      .writeHeader('content-type', answer.contentType)
      .end(answer.body);
  });
}

/** The first non-empty token of a `Sec-WebSocket-Protocol` offer, trimmed; '' for none (no header then). */
function firstSubprotocol(offer: string): string {
  for (const token of offer.split(',')) {
    const trimmed = token.trim();
    if (trimmed !== '') return trimmed;
  }
  return '';
}
