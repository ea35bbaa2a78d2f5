import { describe, expect, it } from 'vitest';
import { SUBSCRIBER_SOCKET_TIMEOUT_MS } from './SubscriberHeartbeat.js';
import { nodeSubscriberOptions } from './nodeSubscriberOptions.js';

describe('nodeSubscriberOptions', () => {
  it("keeps the cluster's TLS servername and credentials, takes host and port from the node name (IPv6 too), drops the reads' timeouts", () => {
    const clusterNode = {
      username: 'relay',
      password: 'secret',
      tls: { servername: 'redis.example.com' },
      protocol: 2 as const,
      commandTimeout: 10_000,
      socketTimeout: 10_000,
      connectionName: 'relay-a:nread',
    };
    const options = nodeSubscriberOptions(clusterNode, '::1:7000', 'relay-a:notify');
    expect(options).toMatchObject({
      host: '::1',
      port: 7000,
      username: 'relay',
      password: 'secret',
      tls: { servername: 'redis.example.com' },
      protocol: 2,
      connectionName: 'relay-a:notify',
      autoResubscribe: false,
      maxRetriesPerRequest: null,
    });
    expect(options.commandTimeout).toBeUndefined();
    expect(options.socketTimeout).toBe(SUBSCRIBER_SOCKET_TIMEOUT_MS);
    expect(() => nodeSubscriberOptions(clusterNode, 'no-port', 'x')).toThrow(RangeError);
  });
});
