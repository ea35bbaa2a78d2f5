import type { RelayPoint } from './FleetStore.js';

export interface AlignedSeries {
  readonly labels: readonly string[];
  /** uPlot's aligned data: x in seconds since the epoch, then one array per label (null: no snapshot that second). */
  readonly data: [number[], ...(number | null)[][]];
}

/**
 * Puts every pod's points on one x axis, a slot per whole second: pods publish once a second
 * each at its own phase, and uPlot draws series that share their x values.
 */
export function alignSeries(history: ReadonlyMap<string, readonly RelayPoint[]>, value: (point: RelayPoint) => number): AlignedSeries {
  const labels = [...history.keys()].sort((a, b) => a.localeCompare(b));
  const slots = new Set<number>();
  const byPod = labels.map((pod) => {
    const values = new Map<number, number>();
    for (const point of history.get(pod) ?? []) {
      const slot = Math.round(point.at / 1000);
      slots.add(slot);
      values.set(slot, value(point));
    }
    return values;
  });
  const x = [...slots].sort((a, b) => a - b);
  return { labels, data: [x, ...byPod.map((values) => x.map((slot) => values.get(slot) ?? null))] };
}
