import { clusterKeySlot } from './clusterKeySlot.js';

// With 3 primaries a candidate lands on a given one about a third of the time; this bound only
// stops a loop that cannot finish (say, a primary owning one slot and a huge count).
const MAX_CANDIDATES = 1_000_000;

/**
 * Picks `count` names `<prefix><n>` spread round-robin over the primaries in `owners` (the owner
 * id of every slot): name j goes to the (j mod P)-th primary, in slot order. Throws if a slot has
 * no owner or `count` is below the number of primaries, since then some primary would get none.
 */
export function pickKeysOnEveryPrimary(owners: readonly (string | undefined)[], prefix: string, count: number): string[] {
  const orphan = owners.indexOf(undefined);
  if (orphan !== -1) throw new Error(`redis cluster: slot ${orphan} has no live primary; call waitHealthy() first`);
  const primaryIds = [...new Set(owners)] as string[];
  if (count < primaryIds.length) {
    throw new Error(`redis cluster: ${count} keys cannot cover ${primaryIds.length} primaries`);
  }
  const buckets = new Map(
    primaryIds.map((id, index) => [id, { quota: Math.ceil((count - index) / primaryIds.length), keys: [] as string[] }]),
  );
  let missing = count;
  for (let n = 0; missing > 0; n += 1) {
    if (n >= MAX_CANDIDATES) throw new Error(`redis cluster: no ${count} keys over every primary among ${MAX_CANDIDATES} candidates`);
    const key = `${prefix}${n}`;
    const bucket = buckets.get(owners[clusterKeySlot(key)] ?? '');
    if (bucket && bucket.keys.length < bucket.quota) {
      bucket.keys.push(key);
      missing -= 1;
    }
  }
  return Array.from(
    { length: count },
    (_, j) => buckets.get(primaryIds[j % primaryIds.length] ?? '')?.keys[Math.floor(j / primaryIds.length)] ?? '',
  );
}
