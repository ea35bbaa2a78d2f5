import type { Cluster, Redis } from 'ioredis';
import { placeStream } from '@streamgate/redis';
import { startRedis, startRedisCluster, startRedisInstances } from '@streamgate/testkit';

/**
 * Where ingest workers under test write: one Redis, a Redis Cluster, or several instances a stream
 * is placed on. Tests read and heartbeat a stream through `clientOf(stream)`.
 */
export interface IngestTarget {
  /** INGEST_REDIS_URL or INGEST_REDIS_TARGETS for spawnIngest's env. */
  readonly env: Readonly<Record<string, string>>;
  clientOf(stream: string): Redis | Cluster;
  /** Which node or instance holds a stream now (its port). */
  nodeOf(stream: string): Promise<number>;
  stop(): Promise<void>;
}

export async function oneRedisTarget(): Promise<IngestTarget> {
  const server = await startRedis();
  const client = server.client();
  return {
    env: { INGEST_REDIS_URL: server.url },
    clientOf: () => client,
    nodeOf: () => Promise.resolve(server.port),
    stop: () => server.stop(),
  };
}

/** Three primaries with one replica each. */
export async function redisClusterTarget(): Promise<IngestTarget> {
  const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
  const client = cluster.cluster();
  return {
    env: { INGEST_REDIS_URL: cluster.url },
    clientOf: () => client,
    nodeOf: async (stream) => (await cluster.primaryOf(stream)).port,
    stop: () => cluster.stop(),
  };
}

/** `count` standalone instances; each stream on placeStream(stream, urls), as the issuer places it. */
export async function redisInstancesTarget(count: number): Promise<IngestTarget> {
  const instances = await startRedisInstances(count);
  const { servers, urls } = instances;
  const clients = new Map(servers.map((s) => [s.url, s.client()]));
  const serverOf = (stream: string) => servers.find((s) => s.url === placeStream(stream, urls));
  return {
    env: { INGEST_REDIS_URL: '', INGEST_REDIS_TARGETS: urls.join(',') },
    clientOf: (stream) => {
      const client = clients.get(placeStream(stream, urls));
      if (client === undefined) throw new Error(`no client for ${stream}`);
      return client;
    },
    nodeOf: (stream) => Promise.resolve(serverOf(stream)?.port ?? 0),
    stop: () => instances.stop(),
  };
}
