/**
 * Keeps at most `max` items of a list for a snapshot and says whether any were cut. Collectors
 * sort their lists worst-first (degraded before active, most connections first) before fitting,
 * so what is cut is what an operator needs least.
 */
export function fitList<T>(items: readonly T[], max: number): { items: T[]; truncated: boolean } {
  return items.length <= max ? { items: [...items], truncated: false } : { items: items.slice(0, max), truncated: true };
}
