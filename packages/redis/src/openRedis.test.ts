import { once } from 'node:events';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openRedis } from './openRedis.js';

/** A listener on the IPv6 loopback: a client that kept the URL's brackets would fail with ENOTFOUND and never arrive. */
async function listenOnIpv6Loopback(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  server.listen(0, '::1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP listener');
  return { server, port: address.port };
}

describe('openRedis', () => {
  // Bounded by the test timeout: a client that never connects fails the test, it does not hang it.
  it.each(['redis://[::1]:PORT/2', 'redis-cluster://[::1]:PORT'])('connects to an IPv6 target (%s)', { timeout: 5_000 }, async (url) => {
    const { server, port } = await listenOnIpv6Loopback();
    const client = openRedis(url.replace('PORT', String(port)), { node: { maxRetriesPerRequest: 0 } });
    client.on('error', () => undefined); // the listener hangs up on it: only the arrival matters here
    try {
      await once(server, 'connection');
      expect(server.listening).toBe(true);
    } finally {
      client.disconnect();
      server.close();
    }
  });
});
