import { describe, expect, it } from 'vitest';
import { isProcessGone } from './isProcessGone.js';
import { startRedisInstances } from './startRedisInstances.js';

describe('startRedisInstances', () => {
  it('starts independent servers and stops them all', async () => {
    const instances = await startRedisInstances(3);
    expect(instances.urls).toEqual(instances.servers.map((server) => `redis://127.0.0.1:${server.port}/0`));
    expect(new Set(instances.servers.map((server) => server.port)).size).toBe(3);
    await instances.servers[0]!.client().set('only', 'first');
    expect(await instances.servers[1]!.client().get('only')).toBeNull();
    const pids = instances.servers.map((server) => server.service?.pid ?? -1);
    await instances.stop();
    await instances.stop();
    expect(pids.every((pid) => pid > 0 && isProcessGone(pid))).toBe(true);
  });

  it('raises the error of a server that cannot start', async () => {
    await expect(startRedisInstances(2, { binary: 'streamgate-no-redis-server' })).rejects.toThrow(/apt-get install redis-server/);
  });
});
