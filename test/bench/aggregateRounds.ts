import type { TaskResult, TaskRound } from './tasksBench.js';

/** The median of `values`, the mean of the middle two when their count is even; null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? 0;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? 0) + upper) / 2;
}

/**
 * The index of the value at the lower median of `values` (nulls left out), earliest on ties; null
 * when every value is null. A whole round has to stand for the latency: p50 and p99 are not
 * medians of anything, and two rounds' percentiles cannot be averaged into a percentile.
 */
export function lowerMedianIndex(values: readonly (number | null)[]): number | null {
  const ranked = values
    .map((v, i) => ({ v, i }))
    .filter((x): x is { v: number; i: number } => x.v !== null)
    .sort((a, b) => a.v - b.v || a.i - b.i);
  return ranked[Math.floor((ranked.length - 1) / 2)]?.i ?? null;
}

/**
 * One series on one workload over its rounds (BENCH_ROUNDS > 1), in the shape of a single
 * measurement so that the table, the growth line and tasks.svg read it alike: Redis and server
 * µs/entry are the medians of the rounds (one round slowed by the VM moves a median little);
 * `step` (p50, p99, p99 from write) is the median round's, the round whose server µs/entry is the
 * lower median; `deliveredShare` counts every round's entries. `rounds` keeps each measurement.
 */
export function aggregateRounds(rounds: readonly TaskRound[]): TaskResult {
  const first = rounds[0];
  if (first === undefined) throw new Error('aggregateRounds: no rounds');
  const measured = rounds.filter((r) => r.step !== null);
  const present = (vs: readonly (number | null)[]): number[] => vs.filter((v): v is number => v !== null);
  const medianRound =
    lowerMedianIndex(rounds.map((r) => (r.step === null ? null : r.serverUsPerEntry))) ?? rounds.indexOf(measured[0] ?? first);
  const expected = measured.reduce((sum, r) => sum + (r.step?.expected ?? 0), 0);
  const received = measured.reduce((sum, r) => sum + (r.step?.received ?? 0), 0);
  const { round: _round, position: _position, ...base } = first;
  return {
    ...base,
    skipped: measured.length === 0 ? first.skipped : null,
    openFailed: rounds.reduce((sum, r) => sum + r.openFailed, 0),
    step: rounds[medianRound]?.step ?? null,
    redisUsPerEntry: median(present(measured.map((r) => r.redisUsPerEntry))),
    serverUsPerEntry: median(present(measured.map((r) => r.serverUsPerEntry))),
    rounds,
    medianRound,
    ...(expected === 0 ? {} : { deliveredShare: received / expected }),
  };
}
