import { describe, expect, it } from 'vitest';
import { isClusterClient, openRedis } from './openRedis.js';

describe('openRedis', () => {
  it('connects to an IPv6 target without the brackets of its URL form', async () => {
    const instance = openRedis('redis://[::1]:6390/2', { node: { lazyConnect: true } });
    const cluster = openRedis('redis-cluster://[::1]:7000', { node: { lazyConnect: true }, cluster: { lazyConnect: true } });
    try {
      expect(isClusterClient(instance)).toBe(false);
      expect(instance.options).toMatchObject({ host: '::1', port: 6390, db: 2 });
      expect(isClusterClient(cluster) ? cluster.startupNodes : null).toEqual([{ host: '::1', port: 7000 }]);
    } finally {
      instance.disconnect();
      cluster.disconnect();
    }
  });
});
