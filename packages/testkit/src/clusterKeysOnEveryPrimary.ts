import type { RedisCluster } from './startRedisCluster.js';

/** `count` key names from `prefix` such that every current primary owns at least one; see RedisCluster.keysOnEveryPrimary. */
export function clusterKeysOnEveryPrimary(
  cluster: Pick<RedisCluster, 'keysOnEveryPrimary'>,
  prefix: string,
  count: number,
): Promise<string[]> {
  return cluster.keysOnEveryPrimary(prefix, count);
}
