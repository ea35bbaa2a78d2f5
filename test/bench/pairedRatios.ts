import type { TaskResult, TaskRound } from './tasksBench.js';

export interface PairedRatios {
  /** The ratio of the two series' medians (the figure the table's rows give); null if either median round failed. */
  readonly ofMedians: number | null;
  /**
   * Round r's `a` ÷ round r's `b`, for every round both measured and passed, in round order: a
   * step that failed (entries lost or late) spent its CPU on fewer entries than it was offered, and
   * its cost per entry compares with nothing.
   */
  readonly perRound: readonly number[];
  readonly min: number | null;
  readonly max: number | null;
}

/**
 * `a` ÷ `b` on one workload (relay ÷ Socket.IO): of the medians, and round by round. Both series
 * of a round ran minutes apart at most, back to back, so a paired ratio cancels most of the drift
 * of the machine between rounds; their spread shows how far one round can be trusted.
 */
export function pairedRatios(a: TaskResult, b: TaskResult, metric: (r: TaskResult) => number | null): PairedRatios {
  const divide = (x: number | null, y: number | null): number | null => (x === null || y === null || y === 0 ? null : x / y);
  const perRound = (a.rounds ?? []).flatMap((ra) => {
    const rb = b.rounds?.find((r) => r.round === ra.round);
    const measured = (r: TaskRound | undefined): r is TaskRound => r !== undefined && r.step !== null && r.step.pass !== false;
    const ratio = measured(ra) && measured(rb) ? divide(metric(ra), metric(rb)) : null;
    return ratio === null ? [] : [ratio];
  });
  return {
    ofMedians: a.step?.pass === false || b.step?.pass === false ? null : divide(metric(a), metric(b)),
    perRound,
    min: perRound.length === 0 ? null : Math.min(...perRound),
    max: perRound.length === 0 ? null : Math.max(...perRound),
  };
}
