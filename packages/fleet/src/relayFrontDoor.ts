import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface RelayFrontDoor extends AsyncDisposable {
  readonly port: number;
  /** `ws://127.0.0.1:<port>/v1/ws`: what clients are given instead of one pod's address. */
  readonly url: string;
  /** The relay ports new connections are spread over, round robin; a draining pod is left out. */
  setBackends(ports: readonly number[]): void;
  /** Connections turned away because no backend was serving, and sockets that failed mid-way. */
  readonly refused: number;
  readonly socketErrors: number;
  close(): Promise<void>;
}

/**
 * A TCP round-robin in front of the relay pods, doing locally what a Kubernetes Service does:
 * a client reconnecting after a drain notice to the same address lands on another pod, because
 * the draining pod is no longer among the backends. Bytes are piped untouched (WebSocket and HTTP).
 */
export async function startRelayFrontDoor(): Promise<RelayFrontDoor> {
  let backends: number[] = [];
  let next = 0;
  let refused = 0;
  let socketErrors = 0;
  const open = new Set<Socket>();

  const server = createServer((client) => {
    const port = backends.length === 0 ? undefined : backends[next++ % backends.length];
    if (port === undefined) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port });
    open.add(client);
    open.add(upstream);
    let ended = false;
    const end = (error?: Error) => {
      if (error !== undefined) socketErrors++;
      if (ended) return;
      ended = true;
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', () => end());
    upstream.on('close', () => end());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const close = async (): Promise<void> => {
    for (const socket of open) socket.destroy();
    open.clear();
    if (!server.listening) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    url: `ws://127.0.0.1:${port}/v1/ws`,
    setBackends: (ports) => {
      backends = [...ports];
    },
    get refused() {
      return refused;
    },
    get socketErrors() {
      return socketErrors;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
