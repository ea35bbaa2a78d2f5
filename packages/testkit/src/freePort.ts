import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the kernel picks it, we close the listener
 * and hand the number on. Another process may take it in between, so spawners that use it retry
 * on a bind failure rather than trusting it.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`freePort: unexpected listener address ${String(address)}`));
        return;
      }
      const { port } = address;
      server.close((error) => (error ? reject(error) : resolve(port)));
    });
  });
}
