import { roundOrder } from './roundOrder.js';

export interface RoundsPlan<S> {
  /** The series to measure, in their first round's order. */
  readonly series: readonly S[];
  readonly rounds: number;
  /** No round starts after this time (ms since the epoch); a started round measures every series. */
  readonly deadline: number;
  readonly now?: () => number;
  /** Said once when the deadline cuts the rounds short: how many ran. */
  readonly onBudgetSpent?: (roundsRun: number) => void;
}

/**
 * Runs `measure` for each round and, within it, each series in roundOrder, one at a time: every
 * series of a round is measured before the next round starts, so a cut by the budget leaves only
 * whole rounds and every kept measurement has its pair. Returns each series' measurements in
 * round order, none for a series when no round ran.
 */
export async function runRounds<S, R>(
  plan: RoundsPlan<S>,
  measure: (series: S, round: number, position: number) => Promise<R>,
): Promise<Map<S, R[]>> {
  const now = plan.now ?? Date.now;
  const out = new Map<S, R[]>(plan.series.map((s) => [s, []]));
  for (let round = 0; round < plan.rounds && plan.series.length > 0; round++) {
    if (now() > plan.deadline) {
      plan.onBudgetSpent?.(round);
      break;
    }
    for (const [position, series] of roundOrder(plan.series, round).entries()) {
      const result = await measure(series, round, position);
      out.get(series)?.push(result);
    }
  }
  return out;
}
