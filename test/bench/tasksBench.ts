import { waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { BenchContext } from './BenchServer.js';
import type { LoadFleet } from './LoadFleet.js';
import type { StepResult } from './fanoutBench.js';
import { usPer } from './pinning.js';
import type { Scale } from './scale.js';
import { logCoresOf, startSeriesStore } from './startSeriesStore.js';
import type { SeriesStore } from './startSeriesStore.js';
import { OPEN_TIMEOUT_MS, measureAtRate, withTaskSession } from './taskSession.js';
import { infeasibleReason, seriesDeadline, socketCount } from './taskWorkloads.js';
import type { TaskSeries, TaskWorkload } from './taskWorkloads.js';

/** One task workload measured once at its fixed rate: what the tasks and cluster parts share. */
export interface TaskWorkloadRun {
  readonly workload: string;
  readonly streams: number;
  readonly eventsPerSecond: number;
  readonly sockets: number;
  /** Why it did not run (fd limit, time budget), else null. */
  readonly skipped: string | null;
  readonly openFailed: number;
  readonly step: StepResult | null;
}

export interface TaskResult extends TaskWorkloadRun {
  readonly series: TaskSeries;
  /**
   * The log's CPU µs per entry delivered, its writes included (XADD is part of what an entry
   * costs): Redis's, or for relay-jetstream the nats-server's, and for relay-jetstream-r3 the sum
   * over its three nats-servers (SeriesStore.logName), the whole cost of a replicated entry.
   */
  readonly redisUsPerEntry: number | null;
  /** Server CPU µs per entry delivered. */
  readonly serverUsPerEntry: number | null;
  /**
   * With BENCH_ROUNDS > 1: every round's measurement of this series on this workload, in round
   * order; the fields above then summarize them (aggregateRounds). Absent with one round.
   */
  readonly rounds?: readonly TaskRound[];
  /** With rounds: the index in `rounds` of the round whose `step` is shown (p50, p99). */
  readonly medianRound?: number;
  /** With rounds: the share of entries delivered over all of them (`step.deliveredRatio` is the median round's). */
  readonly deliveredShare?: number;
}

/** One measurement of a series on a workload in a run of several rounds. */
export interface TaskRound extends Omit<TaskResult, 'rounds' | 'medianRound' | 'deliveredShare'> {
  /** 0-based. */
  readonly round: number;
  /** Its place in the round's order (0: measured first), to look for an order effect in results.json. */
  readonly position: number;
}

export interface TasksDeps {
  readonly series: readonly TaskSeries[];
  readonly ctx: Omit<BenchContext, 'redisUrl'>;
  readonly fleet: LoadFleet;
  readonly scale: Scale;
  readonly fdLimit: number;
  readonly mintTokens: (redisUrl: string, streams: readonly string[]) => Promise<string[]>;
  readonly log: (line: string) => void;
  /** No workload starts after this time (ms since the epoch); each series has its share of the time until then. */
  readonly deadline: number;
}

/** Every chosen series on every task workload: a fresh store (Redis, or nats-server) per series, a fresh server per workload. */
export async function measureTasks(d: TasksDeps): Promise<TaskResult[]> {
  const out: TaskResult[] = [];
  const workloads = d.scale.tasks.workloads;
  const startedAt = Date.now();
  for (const [i, series] of d.series.entries()) {
    const deadline = seriesDeadline(startedAt, d.deadline, i, d.series.length);
    const store = await startSeriesStore(series, Math.max(1_000, d.fdLimit - 32), d.ctx.pinning);
    try {
      for (const w of workloads) {
        const reason = infeasibleReason(series, w, d.fdLimit) ?? (Date.now() > deadline ? 'time budget spent' : null);
        if (reason !== null) {
          d.log(`${series}: ${w.name}: skipped, ${reason}`);
          out.push(skipped(series, w, reason));
          continue;
        }
        d.log(`${series}: ${w.name} (${socketCount(w)} sockets × ${w.subsPerSocket} subscriptions)`);
        out.push(await measureOne(d, store, w));
      }
    } finally {
      await store.stop();
    }
  }
  return out;
}

/** One series on one workload: a fresh server on the series' store, a warm-up step, then the recorded step. */
export async function measureOne(d: TasksDeps, store: SeriesStore, w: TaskWorkload): Promise<TaskResult> {
  const { series, setup } = store;
  const ready = setup.kind === 'wsrelay' ? () => waitForReadLoops(d, store.redis, w.streams) : undefined;
  return withTaskSession(
    d,
    store.target,
    setup,
    w,
    store.meter,
    async (session) => {
      const step = await measureAtRate(session, d.scale, d.scale.tasks.stepMs, w.eventsPerSecond);
      const wall = step.wallSeconds ?? 0;
      const result: TaskResult = {
        ...skipped(series, w, null),
        openFailed: session.openFailed,
        step,
        redisUsPerEntry: usPer(logCoresOf(step), wall, step.received),
        serverUsPerEntry: usPer(step.serverCpu, wall, step.received),
      };
      d.log(`    ${store.logName} ${fmtUs(result.redisUsPerEntry)} µs/entry, server ${fmtUs(result.serverUsPerEntry)} µs/entry`);
      return result;
    },
    ready,
  );
}

/**
 * The ws relay confirms a join before its new connection has sent its first `XREAD … $`: entries
 * written in between are never read. Measuring only once every stream's loop blocks in Redis keeps
 * that start-up race (thousands of connections opening) out of the delivered share.
 */
async function waitForReadLoops(d: TasksDeps, redis: RedisServer, streams: number): Promise<void> {
  const info = redis.client();
  try {
    await waitFor(
      async () => {
        const blocked = Number(/blocked_clients:(\d+)/.exec(await info.info('clients'))?.[1] ?? 0);
        return blocked >= streams;
      },
      { timeoutMs: OPEN_TIMEOUT_MS, intervalMs: 200, message: `${streams} ws relay read loops blocked in Redis` },
    );
  } catch (error) {
    d.log(`  measuring anyway: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    info.disconnect();
  }
}

export function skipped(series: TaskSeries, w: TaskWorkload, reason: string | null): TaskResult {
  return {
    series,
    workload: w.name,
    streams: w.streams,
    eventsPerSecond: w.eventsPerSecond,
    sockets: socketCount(w),
    skipped: reason,
    openFailed: 0,
    step: null,
    redisUsPerEntry: null,
    serverUsPerEntry: null,
  };
}

const fmtUs = (v: number | null): string => (v === null ? '—' : v.toFixed(1));
