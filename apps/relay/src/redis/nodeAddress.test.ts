import { describe, expect, it } from 'vitest';
import { nodeAddress } from './nodeAddress.js';

describe('nodeAddress', () => {
  it('splits a node name at its last colon, IPv6 hosts included; refuses what is no host:port', () => {
    expect(nodeAddress('10.0.0.7:7000')).toEqual({ host: '10.0.0.7', port: 7000 });
    expect(nodeAddress('::1:7000')).toEqual({ host: '::1', port: 7000 });
    expect(nodeAddress('[fe80::1]:7001')).toEqual({ host: 'fe80::1', port: 7001 });
    expect(nodeAddress('redis-0.redis:6379')).toEqual({ host: 'redis-0.redis', port: 6379 });
    for (const bad of ['', 'host', ':7000', 'host:', 'host:0', 'host:70000', 'host:7x']) expect(nodeAddress(bad), bad).toBeNull();
  });
});
