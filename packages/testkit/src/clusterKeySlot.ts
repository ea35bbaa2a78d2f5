import { keySlot } from '@streamgate/redis';

/** Redis Cluster has this many hash slots; a key's slot is CRC16(key or its hash tag) mod 16384. */
export const CLUSTER_SLOTS = 16_384;

/**
 * The hash slot Redis Cluster assigns `key` (what `CLUSTER KEYSLOT` answers), computed locally so
 * a test can pick keys per node without a round trip; the same function the apps route with.
 */
export function clusterKeySlot(key: string): number {
  return keySlot(key);
}
