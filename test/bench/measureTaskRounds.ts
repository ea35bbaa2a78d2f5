import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { aggregateRounds } from './aggregateRounds.js';
import { pinProcess } from './pinning.js';
import { runRounds } from './runRounds.js';
import { measureOne, skipped } from './tasksBench.js';
import type { TaskResult, TaskRound, TasksDeps } from './tasksBench.js';
import { infeasibleReason, seriesSetup, socketCount } from './taskWorkloads.js';
import type { SeriesSetup, TaskSeries } from './taskWorkloads.js';

interface SeriesRedis {
  readonly setup: SeriesSetup;
  readonly redis: RedisServer;
  readonly pid: number | null;
}

/**
 * BENCH_ROUNDS > 1: each workload measured `rounds` times per series, the series alternating
 * within the workload (A B, then B A: runRounds), each measurement a fresh server as with one
 * round. Measuring one series' workloads after another's put minutes between the two sides of a
 * ratio, and this VM's per-entry CPU drifts ±40% over minutes; back to back and alternated, each
 * side sees the same machine. Each series keeps its one Redis (its own configuration, pinned)
 * for the whole part, so no Redis start lands between the two sides of a pair.
 *
 * Time budget: no round starts after `d.deadline`, and a started round measures every series, so
 * the pairs stay whole; a workload without a round is reported as not run, one with fewer rounds
 * over those it has (the per-series shares of one round do not apply: every series advances together).
 */
export async function measureTaskRounds(d: TasksDeps & { readonly rounds: number }): Promise<TaskResult[]> {
  const maxClients = Math.max(1_000, d.fdLimit - 32);
  const redises = new Map<TaskSeries, SeriesRedis>();
  try {
    for (const series of d.series) {
      const setup = seriesSetup(series, maxClients);
      const redis = await startRedis({ args: setup.redisArgs });
      const pid = redis.service?.pid ?? null;
      redises.set(series, { setup, redis, pid });
      if (d.ctx.pinning.pinned && pid !== null) pinProcess(pid, d.ctx.pinning.plan.clientCpus);
    }
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
          const r = redises.get(series);
          if (r === undefined) throw new Error(`no Redis for ${series}`);
          d.log(`${series}: ${w.name}, round ${round + 1} of ${d.rounds} (${socketCount(w)} sockets × ${w.subsPerSocket} subscriptions)`);
          return { ...(await measureOne(d, series, r.setup, w, r.redis, r.pid)), round, position };
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
    for (const { redis } of redises.values()) await redis.stop();
  }
}
