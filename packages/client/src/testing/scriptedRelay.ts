import { parseClientFrame, PROTOCOL_VERSION } from '@streamgate/protocol';
import type { ClientFrame, RelaySubscription, ServerFrame, StreamName } from '@streamgate/protocol';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { RelayLogger } from '../logger.js';

/**
 * A relay peer for tests: a real WebSocket server on an ephemeral port that records every
 * client frame (parsed with the protocol's own parser) and sends whatever frames a test scripts.
 * Only for tests; excluded from the build.
 */
export class ScriptedRelay {
  readonly url: string;
  readonly sockets: WebSocket[] = [];
  /** Every client frame, with the index of the socket it came on. */
  readonly received: Array<{ socket: number; frame: ClientFrame }> = [];
  readonly badFrames: string[] = [];
  readonly #server: WebSocketServer;

  private constructor(server: WebSocketServer, port: number) {
    this.#server = server;
    this.url = `ws://127.0.0.1:${port}/v1/ws`;
    server.on('connection', (socket) => {
      const index = this.sockets.push(socket) - 1;
      socket.on('message', (data, isBinary) => {
        const text = isBinary ? '' : Buffer.isBuffer(data) ? data.toString('utf8') : '';
        const parsed = parseClientFrame(text);
        if (parsed.ok) this.received.push({ socket: index, frame: parsed.frame });
        else this.badFrames.push(`${parsed.error.code}: ${parsed.error.message}`);
      });
      this.send(index, {
        op: 'welcome',
        protocol: PROTOCOL_VERSION,
        node: `pod-${port}`,
        limits: { maxFrameBytes: 65_536, maxSubscriptions: 100 },
      });
    });
  }

  static async start(): Promise<ScriptedRelay> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const address = server.address();
    if (address === null || typeof address !== 'object') throw new Error('WebSocketServer has no port');
    return new ScriptedRelay(server, address.port);
  }

  send(socket: number, frame: ServerFrame): void {
    this.sendRaw(socket, JSON.stringify(frame));
  }

  sendRaw(socket: number, text: string): void {
    const ws = this.sockets[socket];
    if (ws === undefined) throw new Error(`no socket #${socket}`);
    ws.send(text);
  }

  /** Client frames of one kind, in arrival order. */
  frames<Op extends ClientFrame['op']>(op: Op, socket?: number): Array<Extract<ClientFrame, { op: Op }>> {
    return this.received
      .filter((r) => socket === undefined || r.socket === socket)
      .map((r) => r.frame)
      .filter((f): f is Extract<ClientFrame, { op: Op }> => f.op === op);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve, reject) => this.#server.close((e) => (e ? reject(e) : resolve())));
  }
}

/**
 * Waits until `probe` returns something other than undefined/false, polling every few ms,
 * and fails with `what` when the deadline passes: tests wait for conditions, never for time.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function tokenFor<T>(stream: StreamName, token = 'jwt-1', expiresInMs = 600_000): RelaySubscription<T> {
  return { token, stream, expiresAt: Date.now() + expiresInMs };
}

/** Keeps what the client logs, so tests stay quiet and can assert on warnings. */
export function recordingLogger(): RelayLogger & { lines: string[] } {
  const lines: string[] = [];
  const push = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: push('debug'), warn: push('warn'), error: push('error') };
}

/** A promise whose settlement the test controls, to hold a `getToken()` call in flight. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
