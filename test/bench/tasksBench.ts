import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { startBenchServer } from './BenchServer.js';
import type { BenchContext } from './BenchServer.js';
import type { LoadFleet } from './LoadFleet.js';
import { createPublisher } from './Publisher.js';
import { runStep } from './fanoutBench.js';
import type { StepResult } from './fanoutBench.js';
import { publishState } from './openLoop.js';
import { pinProcess, usPer } from './pinning.js';
import type { Scale } from './scale.js';
import { infeasibleReason, seriesDeadline, seriesSetup, socketCount, taskClients } from './taskWorkloads.js';
import type { SeriesSetup, TaskSeries, TaskWorkload } from './taskWorkloads.js';

export interface TaskResult {
  readonly series: TaskSeries;
  readonly workload: string;
  readonly streams: number;
  readonly eventsPerSecond: number;
  readonly sockets: number;
  /** Why this series did not run this workload (fd limit, time budget), else null. */
  readonly skipped: string | null;
  readonly openFailed: number;
  readonly step: StepResult | null;
  /** Redis CPU µs per entry delivered (its writes included: XADD is part of what an entry costs). */
  readonly redisUsPerEntry: number | null;
  /** Server CPU µs per entry delivered. */
  readonly serverUsPerEntry: number | null;
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

const OPEN_TIMEOUT_MS = 120_000;
/** An unrecorded first step per workload: the first one after thousands of subscribes carries their GC and JIT. */
const WARMUP_MS = 1_000;

/** Every chosen series on every task workload: a fresh Redis per series, a fresh server per workload. */
export async function measureTasks(d: TasksDeps): Promise<TaskResult[]> {
  const out: TaskResult[] = [];
  const workloads = d.scale.tasks.workloads;
  const startedAt = Date.now();
  for (const [i, series] of d.series.entries()) {
    const deadline = seriesDeadline(startedAt, d.deadline, i, d.series.length);
    const setup = seriesSetup(series, Math.max(1_000, d.fdLimit - 32));
    const redis = await startRedis({ args: setup.redisArgs });
    try {
      const redisPid = redis.service?.pid ?? null;
      if (d.ctx.pinning.pinned && redisPid !== null) pinProcess(redisPid, d.ctx.pinning.plan.clientCpus);
      for (const w of workloads) {
        const reason = infeasibleReason(series, w, d.fdLimit) ?? (Date.now() > deadline ? 'time budget spent' : null);
        if (reason !== null) {
          d.log(`${series}: ${w.name}: skipped, ${reason}`);
          out.push(skipped(series, w, reason));
          continue;
        }
        d.log(`${series}: ${w.name} (${socketCount(w)} sockets × ${w.subsPerSocket} subscriptions)`);
        out.push(await measureOne(d, series, setup, w, redis, redisPid));
      }
    } finally {
      await redis.stop();
    }
  }
  return out;
}

async function measureOne(
  d: TasksDeps,
  series: TaskSeries,
  setup: SeriesSetup,
  w: TaskWorkload,
  redis: RedisServer,
  redisPid: number | null,
): Promise<TaskResult> {
  await redis.client().flushall();
  const streams = Array.from({ length: w.streams }, (_, s) => `task:${s}`);
  await seedStreams(redis, streams);
  const tokens = setup.kind === 'relay' ? await d.mintTokens(redis.url, streams) : [];
  const server = await startBenchServer(setup.kind, { ...d.ctx, redisUrl: redis.url }, 0, setup.env);
  try {
    const t0 = Date.now();
    const opened = await d.fleet.open({
      kind: setup.kind,
      port: server.port,
      streams,
      tokens,
      clients: taskClients(w),
      trackSeq: false,
      reconnect: false,
      timeoutMs: OPEN_TIMEOUT_MS,
    });
    d.log(`  ${opened.ready} sockets subscribed in ${Date.now() - t0} ms${opened.failed > 0 ? `, ${opened.failed} failed` : ''}`);
    if (setup.kind === 'wsrelay') await waitForReadLoops(d, redis, w.streams);
    const publisher = await createPublisher(setup.kind, redis.url, server.port);
    try {
      const deps = {
        fleet: d.fleet,
        publisher,
        state: publishState(streams),
        serverPid: server.pid,
        redisPid,
        log: d.log,
      };
      d.log('    warm-up step (not recorded):');
      await runStep({ ...deps, scale: { ...d.scale, stepMs: WARMUP_MS } }, { perStream: 1 }, w.eventsPerSecond);
      const step = await runStep({ ...deps, scale: { ...d.scale, stepMs: d.scale.tasks.stepMs } }, { perStream: 1 }, w.eventsPerSecond);
      const wall = step.wallSeconds ?? 0;
      const result: TaskResult = {
        ...skipped(series, w, null),
        openFailed: opened.failed,
        step,
        redisUsPerEntry: usPer(step.redisCpu, wall, step.received),
        serverUsPerEntry: usPer(step.serverCpu, wall, step.received),
      };
      d.log(`    redis ${fmtUs(result.redisUsPerEntry)} µs/entry, server ${fmtUs(result.serverUsPerEntry)} µs/entry`);
      return result;
    } finally {
      await d.fleet.closeAll();
      await publisher.close();
    }
  } finally {
    if (process.env.BENCH_DEBUG === '1') process.stderr.write(server.service.output());
    await server.service.stop(10_000);
  }
}

/**
 * A per-task stream exists before a tab subscribes to it (the task wrote its start). Unseeded, a
 * quiet workload would create most of its keys inside the measured step (at 50,000 streams and
 * 10,000 events/s each key gets its first entry there), and key creation is not what it measures.
 * Subscribers read live from `$`, so the seed entry is never delivered.
 */
async function seedStreams(redis: RedisServer, streams: readonly string[]): Promise<void> {
  const client = redis.client();
  try {
    for (let from = 0; from < streams.length; from += 5_000) {
      const pipeline = client.pipeline();
      for (const stream of streams.slice(from, from + 5_000)) pipeline.xadd(stream, '*', 'data', '{"seed":true}');
      const failed = (await pipeline.exec())?.find(([error]) => error !== null);
      if (failed !== undefined) throw new Error(`seeding the task streams failed: ${String(failed[0])}`);
    }
  } finally {
    client.disconnect();
  }
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

function skipped(series: TaskSeries, w: TaskWorkload, reason: string | null): TaskResult {
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
