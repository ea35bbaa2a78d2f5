import { parseClientFrame, PROTOCOL_VERSION } from '@streamgate/protocol';
import type { ClientFrame, ServerFrame } from '@streamgate/protocol';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';

/**
 * A relay peer for tests: a real WebSocket server on an ephemeral port that records every
 * client frame (parsed with the protocol's own parser) and sends whatever frames a test scripts.
 */
export class ScriptedRelay {
  readonly url: string;
  readonly sockets: WebSocket[] = [];
  /** Every client frame, with the index of the socket it came on. */
  readonly received: Array<{ socket: number; frame: ClientFrame }> = [];
  readonly badFrames: string[] = [];
  /** Close codes of the sockets the client closed, in order. */
  readonly closes: number[] = [];
  readonly #server: WebSocketServer;

  private constructor(server: WebSocketServer, port: number) {
    this.#server = server;
    this.url = `ws://127.0.0.1:${port}/v1/ws`;
    server.on('connection', (socket) => {
      const index = this.sockets.push(socket) - 1;
      socket.on('close', (code) => this.closes.push(code));
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
