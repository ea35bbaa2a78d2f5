/** The most of `times` (ms, any order) that any window of `ms` holds: a rate limit's check on what a venue saw. */
export function busiestWindow(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while ((sorted[to] ?? 0) - (sorted[from] ?? 0) >= ms) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}
