/**
 * The positions of `items` grouped by `groupOf`, groups in order of first appearance, positions in
 * order within each: a per-slot or per-node split that can be put back in the callers' order.
 */
export function groupIndexes<T, G>(items: readonly T[], groupOf: (item: T) => G): Map<G, number[]> {
  const groups = new Map<G, number[]>();
  items.forEach((item, index) => {
    const group = groupOf(item);
    const indexes = groups.get(group);
    if (indexes === undefined) groups.set(group, [index]);
    else indexes.push(index);
  });
  return groups;
}
