import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface TcpProxy extends AsyncDisposable {
  readonly port: number;
  /** Connections accepted and not yet closed on the client's side. */
  readonly openConnections: number;
  /**
   * Stops forwarding in both directions without closing anything: bytes from either side are
   * dropped, and a close on one side is not passed to the other. What a NAT that dropped its
   * state, or a proxy that stopped forwarding, looks like to both ends: a half-open socket.
   */
  blackhole(): void;
  close(): Promise<void>;
}

/** A byte-level TCP proxy on loopback in front of `target`, for faults below the WebSocket layer. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let holed = false;
  const sockets = new Set<Socket>();
  let open = 0;
  const server = createServer((client) => {
    open += 1;
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!holed) to.write(chunk);
      });
      from.on('end', () => {
        if (!holed) to.end();
      });
      from.on('close', () => {
        sockets.delete(from);
        if (!holed) to.destroy();
      });
      // A reset on either side is part of the scenario, never a test failure.
      from.on('error', () => undefined);
    };
    forward(client, upstream);
    forward(upstream, client);
    client.once('close', () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    get openConnections() {
      return open;
    },
    blackhole: () => {
      holed = true;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
