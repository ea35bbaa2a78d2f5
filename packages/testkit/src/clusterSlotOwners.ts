import { CLUSTER_SLOTS } from './clusterKeySlot.js';
import type { ClusterNodeEntry } from './parseClusterNodes.js';

/**
 * Which live node serves each slot as primary, from the `CLUSTER NODES` views of the live nodes:
 * the claim with the highest config epoch wins, the rule Redis itself uses, so a view that has not
 * heard of a failover yet (or a restarted old primary still claiming its slots) loses to one that
 * has. Only claims by nodes in `liveIds` count. Entry `slot` is the owner's id, or undefined.
 */
export function clusterSlotOwners(views: readonly (readonly ClusterNodeEntry[])[], liveIds: ReadonlySet<string>): (string | undefined)[] {
  const owners = new Array<string | undefined>(CLUSTER_SLOTS).fill(undefined);
  const epochs = new Array<number>(CLUSTER_SLOTS).fill(-1);
  for (const view of views) {
    for (const entry of view) {
      if (!entry.isPrimary || !liveIds.has(entry.id)) continue;
      for (const [first, last] of entry.slots) {
        for (let slot = first; slot <= last; slot += 1) {
          if (entry.configEpoch > (epochs[slot] ?? -1)) {
            epochs[slot] = entry.configEpoch;
            owners[slot] = entry.id;
          }
        }
      }
    }
  }
  return owners;
}
