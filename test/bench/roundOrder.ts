/**
 * The order in which round `round` (0-based) measures `items`: as given in even rounds, reversed in
 * odd ones (A B C, then C B A). A series measured first in one round is measured last in the next,
 * so a slow drift of the machine (VM steal, other load) weighs on each series alike instead of on
 * whichever happened to run later.
 */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}
