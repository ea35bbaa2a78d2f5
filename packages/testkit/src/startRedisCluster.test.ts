import { afterAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { clusterKeySlot } from './clusterKeySlot.js';
import { clusterKeysOnEveryPrimary } from './clusterKeysOnEveryPrimary.js';
import { isProcessGone } from './isProcessGone.js';
import { redisPing } from './redisPing.js';
import { startRedisCluster } from './startRedisCluster.js';
import type { RedisCluster } from './startRedisCluster.js';
import { waitFor } from './waitFor.js';

// One cluster for the file: starting six nodes is the slow part, and each step builds on the last.
let redisCluster: RedisCluster | undefined;
afterAll(async () => {
  await redisCluster?.stop();
});

/** Errors a Cluster client reports while a node is down are expected here; kept, not printed. */
function quiet(client: Cluster): Cluster {
  client.on('error', () => undefined);
  client.on('node error', () => undefined);
  return client;
}

describe('startRedisCluster', () => {
  it('starts a healthy cluster, fails a killed primary over to its replica, and takes the node back as a replica', async () => {
    const cluster = (redisCluster = await startRedisCluster());
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.nodes.filter((node) => node.role === 'primary')).toHaveLength(3);
    expect(new Set(cluster.nodes.flatMap((node) => [node.port, node.busPort])).size).toBe(12);
    expect(cluster.nodes.map((node) => node.port)).not.toContain(6379);
    expect(cluster.url).toBe(`redis-cluster://127.0.0.1:${cluster.seedPort}`);
    const pids = cluster.nodes.map((node) => node.service?.pid ?? -1);

    // The local slot function agrees with the server, hash tags included.
    const probe = cluster.nodes[0]!.client();
    for (const key of ['k', 'stream:btc', '{user1000}.following', 'a{}b', 'ключ']) {
      expect(clusterKeySlot(key), key).toBe(await probe.cluster('KEYSLOT', key));
    }

    const keys = await clusterKeysOnEveryPrimary(cluster, 'stream:', 5);
    expect(keys).toHaveLength(5);
    const owners = await Promise.all(keys.map((key) => cluster.primaryOf(key)));
    expect(new Set(owners.map((node) => node.id))).toEqual(new Set((await cluster.primaries()).map((node) => node.id)));

    const client = quiet(cluster.cluster());
    await client.set('k', 'v');
    const original = await cluster.primaryOf('k');
    expect(original.role).toBe('primary');
    const direct = original.client();
    expect(await direct.get('k')).toBe('v');
    // Replication is asynchronous: make sure the replica has the key before its primary dies.
    expect(await direct.wait(1, 2_000)).toBe(1);
    direct.disconnect();

    expect((await original.kill())?.signal).toBe('SIGKILL');
    expect(original.running).toBe(false);
    const promoted = await waitFor(
      async () => {
        const node = await cluster.primaryOf('k');
        return node.id !== original.id && node;
      },
      { timeoutMs: 15_000, intervalMs: 100, message: 'a replica took over the killed primary' },
    );
    expect(promoted.role).toBe('replica');
    await waitFor(async () => (await client.get('k')) === 'v', {
      timeoutMs: 10_000,
      intervalMs: 100,
      message: 'the cluster client reads k from the promoted node',
    });

    await original.restart();
    await cluster.waitHealthy(15_000);
    expect(await original.currentRole()).toBe('replica');
    expect(await promoted.currentRole()).toBe('primary');
    const primaryIds = (await cluster.primaries()).map((node) => node.id);
    expect(primaryIds).toHaveLength(3);
    expect(primaryIds).toContain(promoted.id);
    expect(primaryIds).not.toContain(original.id);
    expect((await cluster.primaryOf('k')).id).toBe(promoted.id);

    await cluster.stop();
    await cluster.stop();
    expect(pids.every((pid) => pid > 0 && isProcessGone(pid))).toBe(true);
    for (const node of cluster.nodes) expect(await redisPing(node.port)).toBe(false);
    // Disconnected; ioredis leaves a Cluster that has reconnected once at 'close' instead of 'end'.
    expect(['close', 'end']).toContain(client.status);
  }, 30_000);

  it('passes args to every node, and waitHealthy names what is wrong when a primary without replica dies', async () => {
    await using cluster = await startRedisCluster({ replicasPerPrimary: 0, args: ['--notify-keyspace-events', 'Kt'] });
    expect(cluster.nodes.map((node) => node.role)).toEqual(['primary', 'primary', 'primary']);
    for (const node of cluster.nodes) {
      const client = node.client();
      expect(await client.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', 'tK']);
      client.disconnect();
    }
    const victim = cluster.nodes[1]!;
    const keys = await cluster.keysOnEveryPrimary('k:', 3);
    const owners = await Promise.all(keys.map((key) => cluster.primaryOf(key)));
    const victimKey = keys[owners.findIndex((node) => node.id === victim.id)]!;
    await victim.kill();
    await expect(cluster.waitHealthy(1_500)).rejects.toThrow(
      /redis cluster not healthy: .*(cluster_state:fail|without a live primary|as master,fail)/,
    );
    expect(await cluster.primaries()).toHaveLength(2);
    await expect(cluster.primaryOf(victimKey)).rejects.toThrow(/no live primary serves slot/);
    await expect(cluster.keysOnEveryPrimary('k:', 3)).rejects.toThrow(/has no live primary/);
  }, 20_000);
});
