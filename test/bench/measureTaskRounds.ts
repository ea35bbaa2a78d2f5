import { aggregateRounds } from './aggregateRounds.js';
import { runRounds } from './runRounds.js';
import { startSeriesStore } from './startSeriesStore.js';
import type { SeriesStore } from './startSeriesStore.js';
import { measureOne, skipped } from './tasksBench.js';
import type { TaskResult, TaskRound, TasksDeps } from './tasksBench.js';
import { infeasibleReason, socketCount } from './taskWorkloads.js';
import type { TaskSeries } from './taskWorkloads.js';

/**
 * BENCH_ROUNDS > 1: each workload measured `rounds` times per series, the series alternating
 * within the workload (A B, then B A: runRounds), each measurement a fresh server as with one
 * round. Measuring one series' workloads after another's put minutes between the two sides of a
 * ratio, and this VM's per-entry CPU drifts ±40% over minutes; back to back and alternated, each
 * side sees the same machine. Each series keeps its one store (its Redis in its own configuration,
 * and a JetStream series' nats-server, pinned: startSeriesStore) for the whole part, so no start
 * of one lands between the two sides of a pair.
 *
 * Time budget: no round starts after `d.deadline`, and a started round measures every series, so
 * the pairs stay whole; a workload without a round is reported as not run, one with fewer rounds
 * over those it has (the per-series shares of one round do not apply: every series advances together).
 */
export async function measureTaskRounds(d: TasksDeps & { readonly rounds: number }): Promise<TaskResult[]> {
  const maxClients = Math.max(1_000, d.fdLimit - 32);
  const stores = new Map<TaskSeries, SeriesStore>();
  try {
    for (const series of d.series) stores.set(series, await startSeriesStore(series, maxClients, d.ctx.pinning));
    const out: TaskResult[] = [];
    for (const w of d.scale.tasks.workloads) {
      const reasons = new Map(d.series.map((s) => [s, infeasibleReason(s, w, d.fdLimit)]));
      const feasible = d.series.filter((s) => reasons.get(s) === null);
      const runs = await runRounds(
        {
          series: feasible,
          rounds: d.rounds,
          deadline: d.deadline,
          onBudgetSpent: (n) => d.log(`${w.name}: time budget spent, ${n} of ${d.rounds} rounds measured`),
        },
        async (series, round, position): Promise<TaskRound> => {
          const store = stores.get(series);
          if (store === undefined) throw new Error(`no store for ${series}`);
          d.log(`${series}: ${w.name}, round ${round + 1} of ${d.rounds} (${socketCount(w)} sockets × ${w.subsPerSocket} subscriptions)`);
          return { ...(await measureOne(d, store, w)), round, position };
        },
      );
      for (const series of d.series) {
        const reason = reasons.get(series) ?? null;
        const measured = runs.get(series) ?? [];
        if (reason !== null) d.log(`${series}: ${w.name}: skipped, ${reason}`);
        out.push(
          reason !== null
            ? skipped(series, w, reason)
            : measured.length === 0
              ? skipped(series, w, 'time budget spent')
              : aggregateRounds(measured),
        );
      }
    }
    return out;
  } finally {
    for (const store of stores.values()) await store.stop();
  }
}
