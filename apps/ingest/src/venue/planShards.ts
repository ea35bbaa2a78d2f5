export interface ShardState {
  index: number;
  /** In the order they were placed: the tail is what was added most recently. */
  symbols: readonly string[];
  /** The most this shard may hold: the venue's stated ceiling, or lower once it measured less. */
  capacity: number;
}

export interface ShardPlanInput {
  shards: readonly ShardState[];
  wanted: readonly string[];
  maxShards: number;
  /** Capacity of a shard this plan opens. */
  defaultCapacity: number;
}

export interface PlannedShard {
  index: number;
  symbols: string[];
}

export interface ShardPlan {
  /** Every input shard (possibly now empty) plus any opened, ordered by index. */
  shards: PlannedShard[];
  /** Wanted symbols no shard has room for: every shard full and `maxShards` reached. */
  unplaced: string[];
}

/**
 * Assigns wanted symbols to shards, starting from where they already are. Re-cutting the sorted
 * wanted set on every change moved symbols across every boundary after an early-sorting add, which
 * unsubscribed and resubscribed healthy symbols; here a symbol stays put while it is wanted and
 * fits, so only shards whose lists actually change need an HTTP call.
 *
 * Pure and deterministic: the same input always gives the same plan.
 */
export function planShards({ shards, wanted, maxShards, defaultCapacity }: ShardPlanInput): ShardPlan {
  // A shard opened with no room would be a session holding nothing; refuse the configuration instead.
  if (!Number.isInteger(defaultCapacity) || defaultCapacity < 1)
    throw new RangeError(`defaultCapacity must be a positive integer, got ${defaultCapacity}`);
  if (!Number.isInteger(maxShards) || maxShards < 0) throw new RangeError(`maxShards must be a non-negative integer, got ${maxShards}`);
  const wantedSet = new Set(wanted);
  const assigned = new Set<string>();
  const planned: { index: number; symbols: string[]; capacity: number }[] = [];

  for (const shard of [...shards].sort((a, b) => a.index - b.index)) {
    const kept: string[] = [];
    for (const symbol of shard.symbols) {
      // Skip duplicates, within one shard or across two (the lower index keeps it): one symbol,
      // one session, or the venue delivers it twice.
      if (!wantedSet.has(symbol) || assigned.has(symbol)) continue;
      kept.push(symbol);
      assigned.add(symbol);
    }
    const capacity = Math.max(0, Math.floor(shard.capacity));
    // Over capacity: the most recently added go, so the longest-standing subscriptions survive.
    for (const evicted of kept.splice(capacity)) assigned.delete(evicted);
    planned.push({ index: shard.index, symbols: kept, capacity });
  }

  const unplaced: string[] = [];
  let cursor = 0; // shards before it are full; placement only ever fills, so it never moves back
  for (const symbol of wantedSet) {
    if (assigned.has(symbol)) continue;
    while (cursor < planned.length && !hasRoom(planned[cursor])) cursor++;
    let target = planned[cursor];
    if (target === undefined && planned.length < maxShards) {
      target = { index: lowestFreeIndex(planned), symbols: [], capacity: defaultCapacity };
      planned.push(target);
      planned.sort((a, b) => a.index - b.index);
      // The new shard may sort before full ones; restart the scan (cheap: at most maxShards).
      cursor = 0;
      while (cursor < planned.length && !hasRoom(planned[cursor])) cursor++;
      target = planned[cursor];
    }
    if (target === undefined) {
      unplaced.push(symbol);
      continue;
    }
    target.symbols.push(symbol);
    assigned.add(symbol);
  }

  return { shards: planned.map(({ index, symbols }) => ({ index, symbols })), unplaced };
}

function hasRoom(shard: { symbols: string[]; capacity: number } | undefined): boolean {
  return shard !== undefined && shard.symbols.length < shard.capacity;
}

function lowestFreeIndex(shards: readonly { index: number }[]): number {
  const used = new Set(shards.map((s) => s.index));
  let index = 0;
  while (used.has(index)) index++;
  return index;
}
