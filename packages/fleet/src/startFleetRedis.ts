import { startRedis, startRedisCluster } from '@streamgate/testkit';
import type { RedisCluster, RedisClusterNode } from '@streamgate/testkit';
import type { FleetAction } from './FleetRelayPool.js';

/** Set up as the README recommends: keyspace notifications on, so relays read woken per key (and the dashboard shows `notify`). */
const NOTIFY_ARGS = ['--notify-keyspace-events', 'Kt'];

/** The fleet's Redis: one instance for everything, or a Redis Cluster for the streams beside an instance for the operations stream. */
export interface FleetRedis {
  /** Where the streams are (tokens name it; publisher and ingest write there): an instance, or the cluster's seed. */
  readonly streamsUrl: string;
  /** Where every pod writes its operations snapshot: the streams' instance, or an instance of its own beside a cluster. */
  readonly opsUrl: string;
  /** The relays' RELAY_REDIS_ALLOWLIST: both of the above. */
  readonly allowlist: string;
  readonly cluster: RedisCluster | null;
  /** SIGKILLs the primary serving `stream`'s slot now; its replica is promoted within seconds. */
  killPrimary(stream: string): Promise<FleetAction>;
  /** Restarts every node killed so far: each rejoins (as a replica, if it was failed over). */
  restartNodes(): Promise<FleetAction>;
  stop(): Promise<void>;
}

const notCluster: FleetAction = {
  ok: false,
  code: 'not_a_cluster',
  retryable: false,
  message: "the fleet's Redis is not a cluster (start it with FLEET_REDIS_CLUSTER=1)",
};

/** Starts what `options` asks for (nothing when given a URL, which then serves streams and snapshots). */
export async function startFleetRedis(options: { redisUrl?: string; cluster?: boolean }): Promise<FleetRedis> {
  if (options.cluster !== true) {
    const server = options.redisUrl === undefined ? await startRedis({ args: NOTIFY_ARGS }) : null;
    const url = options.redisUrl ?? server?.url ?? '';
    return {
      streamsUrl: url,
      opsUrl: url,
      allowlist: url,
      cluster: null,
      killPrimary: () => Promise.resolve(notCluster),
      restartNodes: () => Promise.resolve(notCluster),
      stop: async () => void (await server?.stop()),
    };
  }
  // Every node notifies, replicas included: a promoted replica serves the reads next.
  const [clusterStart, opsStart] = await Promise.allSettled([startRedisCluster({ args: NOTIFY_ARGS }), startRedis({ args: NOTIFY_ARGS })]);
  if (clusterStart.status === 'rejected' || opsStart.status === 'rejected') {
    if (clusterStart.status === 'fulfilled') await clusterStart.value.stop();
    if (opsStart.status === 'fulfilled') await opsStart.value.stop();
    throw clusterStart.status === 'rejected' ? clusterStart.reason : (opsStart as PromiseRejectedResult).reason;
  }
  const cluster = clusterStart.value;
  const ops = opsStart.value;
  const killed = new Set<RedisClusterNode>();
  return {
    streamsUrl: cluster.url,
    opsUrl: ops.url,
    allowlist: `${cluster.url},${ops.url}`,
    cluster,
    async killPrimary(stream) {
      let node: RedisClusterNode;
      try {
        node = await cluster.primaryOf(stream);
      } catch (error) {
        return { ok: false, code: 'no_primary', retryable: false, message: `no live primary serves ${stream}: ${String(error)}` };
      }
      await node.kill();
      killed.add(node);
      return { ok: true, message: `primary 127.0.0.1:${node.port} (serving ${stream}) killed; its replica takes over within seconds` };
    },
    async restartNodes() {
      const nodes = [...killed];
      killed.clear();
      await Promise.all(nodes.map((n) => n.restart()));
      return {
        ok: true,
        message: nodes.length === 0 ? 'no node was killed' : `restarted ${nodes.map((n) => `127.0.0.1:${n.port}`).join(', ')}`,
      };
    },
    stop: async () => {
      await Promise.allSettled([cluster.stop(), ops.stop()]);
    },
  };
}
