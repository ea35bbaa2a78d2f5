import { startRedis, startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { Redis } from 'ioredis';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import { seedStreams } from './seedStreams.js';

/** Where a workload's streams live: one redis-server, or a Redis Cluster. */
export interface BenchTarget {
  readonly kind: 'single' | 'cluster';
  /** What tokens and the relay's allowlist name: `redis://…/0` or `redis-cluster://seed`. */
  readonly url: string;
  /** The one Redis process (StepDeps.redisPid) of a single target; null for a cluster. */
  readonly redisPid: number | null;
  /** Redis processes by role, metered per step (StepDeps.cpuGroups): `primaries`, `replicas`. */
  readonly cpuGroups: { readonly primaries: readonly number[]; readonly replicas: readonly number[] };
  /** `INFO commandstats` of each primary (StepDeps.commandStats). */
  commandStats(): Promise<string[]>;
  /** Empties every primary (its replicas follow). */
  flush(): Promise<void>;
  seed(streams: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/** A target over a running redis-server (stopped by its owner, not by stop()). */
export function singleTarget(redis: RedisServer): BenchTarget {
  const pid = redis.service?.pid ?? null;
  return {
    kind: 'single',
    url: redis.url,
    redisPid: pid,
    cpuGroups: { primaries: pid === null ? [] : [pid], replicas: [] },
    commandStats: async () => [await commandStatsOf(redis.client())],
    flush: async () => void (await redis.client().flushall()),
    seed: async (streams) => {
      const client = redis.client();
      try {
        await seedStreams(client, streams);
      } finally {
        client.disconnect();
      }
    },
    stop: () => Promise.resolve(),
  };
}

/**
 * One redis-server with `args`, and `replicas` replicas of it (each `--replicaof` it, with the
 * same args) metered as the target's `replicas` group, like a cluster's: a primary that feeds a
 * replica does work a lone one does not. Every process is pinned to the client side's cores when
 * pinned; the replicas are in sync before this returns.
 */
export async function startSingleTarget(
  args: readonly string[],
  pinning: Pinning,
  replicas = 0,
): Promise<BenchTarget & { readonly redis: RedisServer }> {
  const redis = await startRedis({ args });
  const followers: RedisServer[] = [];
  try {
    for (let i = 0; i < replicas; i++)
      followers.push(await startRedis({ args: [...args, '--replicaof', '127.0.0.1', String(redis.port)] }));
    await Promise.all(followers.map((f) => waitInSync(f)));
  } catch (error) {
    await Promise.all([...followers, redis].map((r) => r.stop()));
    throw error;
  }
  const target = singleTarget(redis);
  const replicaPids = followers.map((f) => f.service?.pid).filter((pid): pid is number => pid !== undefined);
  if (pinning.pinned) for (const pid of [target.redisPid, ...replicaPids]) if (pid !== null) pinProcess(pid, pinning.plan.clientCpus);
  return {
    ...target,
    cpuGroups: { primaries: target.cpuGroups.primaries, replicas: replicaPids },
    redis,
    stop: async () => void (await Promise.all([...followers, redis].map((r) => r.stop()))),
  };
}

/** Until the replica's link to its primary is up and its first sync done. */
async function waitInSync(replica: RedisServer): Promise<void> {
  const client = replica.client();
  try {
    await waitFor(async () => /master_link_status:up/.test(await client.info('replication')), {
      timeoutMs: 20_000,
      intervalMs: 100,
      message: `replica on ${replica.port} in sync`,
    });
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis Cluster of `primaries` primaries with `replicasPerPrimary` replicas each (testkit
 * startRedisCluster), every node with `args`, pinned to the client side's cores when pinned.
 */
export async function startClusterTarget(
  options: { primaries: number; replicasPerPrimary: number; args: readonly string[] },
  pinning: Pinning,
): Promise<BenchTarget> {
  const cluster = await startRedisCluster({
    primaries: options.primaries,
    replicasPerPrimary: options.replicasPerPrimary,
    args: options.args,
  });
  try {
    await cluster.waitHealthy();
    const seeder = cluster.cluster({ enableAutoPipelining: true });
    const byRole = { primaries: [] as number[], replicas: [] as number[] };
    for (const node of cluster.nodes) {
      const pid = node.service?.pid;
      if (pid === undefined) throw new Error(`cluster node ${node.port} has no process`);
      if (pinning.pinned) pinProcess(pid, pinning.plan.clientCpus);
      (node.role === 'primary' ? byRole.primaries : byRole.replicas).push(pid);
    }
    return {
      kind: 'cluster',
      url: cluster.url,
      redisPid: null,
      cpuGroups: byRole,
      commandStats: async () => Promise.all((await cluster.primaries()).map((node) => commandStatsOf(node.client()))),
      flush: async () => {
        await Promise.all((await cluster.primaries()).map((node) => node.client().flushall()));
      },
      // One client for every seeding, closed by the cluster's stop().
      seed: (streams) => seedStreams(seeder, streams),
      stop: () => cluster.stop(),
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** One `INFO commandstats` through a client of its own, closed after. */
export async function commandStatsOf(client: Redis): Promise<string> {
  try {
    return await client.info('commandstats');
  } finally {
    client.disconnect();
  }
}
