import { startClusterTarget, startSingleTarget } from './BenchTarget.js';
import type { BenchTarget } from './BenchTarget.js';
import { runStep, searchKnee } from './fanoutBench.js';
import type { StepResult } from './fanoutBench.js';
import type { TaskWorkloadRun } from './tasksBench.js';
import { classifyBound, usPer } from './pinning.js';
import type { Bound } from './pinning.js';
import type { Scale } from './scale.js';
import { measureAtRate, withTaskSession } from './taskSession.js';
import type { SessionDeps, TaskSession } from './taskSession.js';
import { TASK_SUBS_PER_SOCKET, seriesSetup, socketCount } from './taskWorkloads.js';
import type { TaskWorkload } from './taskWorkloads.js';

export type ClusterTargetKind = BenchTarget['kind'];

/** Redis and relay CPU per delivered entry of one step. */
export interface EntryCosts {
  /** Summed over the primaries (the one Redis of a single target), XADDs included. */
  readonly primariesUsPerEntry: number | null;
  /** Summed over the replicas (replication); null without replicas. */
  readonly replicasUsPerEntry: number | null;
  readonly relayUsPerEntry: number | null;
}

/** One task workload at its fixed rate on one target. */
export interface ClusterRun extends EntryCosts, TaskWorkloadRun {
  readonly target: ClusterTargetKind;
}

/** The throughput step on one target: deliveries/s at the knee, and what limited it. */
export interface ClusterKnee {
  readonly target: ClusterTargetKind;
  readonly streams: number;
  readonly skipped: string | null;
  readonly steps: StepResult[];
  readonly knee: StepResult | null;
  readonly kneeFail: StepResult | null;
  /** `server`: the relay's core (cpu 0 when pinned) was ≥ 90% busy at the knee; `client`: it was not. */
  readonly bound: Bound | null;
  /** Cores the client side used at the knee: Redis (every node), load generator and publisher. */
  readonly clientCores: number | null;
  readonly costs: EntryCosts | null;
}

export interface ClusterResults {
  readonly primaries: number;
  readonly replicasPerPrimary: number;
  readonly runs: ClusterRun[];
  readonly throughput: ClusterKnee[];
}

export interface ClusterDeps extends SessionDeps {
  readonly scale: Scale;
  /** No measurement starts after this time (ms since the epoch). */
  readonly deadline: number;
}

/**
 * The same per-task workloads on one Redis and on a Redis Cluster, in one run: the relay reading
 * on keyspace notifications (every node notifies, `Kt`), one fresh relay per measurement, the two
 * targets alternating per workload so that drifting load on the machine weighs on both alike.
 */
export async function measureCluster(d: ClusterDeps): Promise<ClusterResults> {
  const cs = d.scale.cluster;
  const setup = seriesSetup('relay-notify', 0);
  // Like for like: the one Redis feeds as many replicas as each of the cluster's primaries.
  const single = await startSingleTarget(setup.redisArgs, d.ctx.pinning, cs.replicasPerPrimary);
  const out: ClusterResults = { primaries: cs.primaries, replicasPerPrimary: cs.replicasPerPrimary, runs: [], throughput: [] };
  try {
    d.log(`cluster: starting ${cs.primaries} primaries with ${cs.replicasPerPrimary} replica(s) each`);
    const cluster = await startClusterTarget(
      { primaries: cs.primaries, replicasPerPrimary: cs.replicasPerPrimary, args: setup.redisArgs },
      d.ctx.pinning,
    );
    try {
      const targets = [single, cluster];
      for (const w of cs.workloads) {
        for (const target of targets) out.runs.push(await fixedRun(d, target, w));
      }
      const tw: TaskWorkload = {
        name: `${cs.throughput.streams.toLocaleString('en-US')} streams × 1, throughput`,
        streams: cs.throughput.streams,
        eventsPerSecond: cs.throughput.firstRate,
        subsPerSocket: TASK_SUBS_PER_SOCKET,
      };
      for (const target of targets) out.throughput.push(await kneeRun(d, target, tw));
    } finally {
      await cluster.stop();
    }
  } finally {
    await single.stop();
  }
  return out;
}

const TARGET_LABEL: Record<ClusterTargetKind, string> = { single: 'one Redis', cluster: 'cluster' };

/** Per-entry costs of a step from its metered groups. */
export function entryCosts(step: StepResult): EntryCosts {
  const wall = step.wallSeconds ?? 0;
  const group = (name: string): number | null => step.groupCpu?.[name] ?? null;
  const replicas = group('replicas');
  return {
    primariesUsPerEntry: usPer(group('primaries') ?? 0, wall, step.received),
    replicasUsPerEntry: replicas === null || replicas === 0 ? null : usPer(replicas, wall, step.received),
    relayUsPerEntry: usPer(step.serverCpu, wall, step.received),
  };
}

const meterOf = (t: BenchTarget) => ({ redisPid: t.redisPid, cpuGroups: t.cpuGroups, commandStats: () => t.commandStats() });

async function fixedRun(d: ClusterDeps, target: BenchTarget, w: TaskWorkload): Promise<ClusterRun> {
  const base = { target: target.kind, workload: w.name, streams: w.streams, eventsPerSecond: w.eventsPerSecond, sockets: socketCount(w) };
  if (Date.now() > d.deadline) {
    d.log(`cluster: ${TARGET_LABEL[target.kind]}: ${w.name}: skipped, time budget spent`);
    return {
      ...base,
      skipped: 'time budget spent',
      openFailed: 0,
      step: null,
      primariesUsPerEntry: null,
      replicasUsPerEntry: null,
      relayUsPerEntry: null,
    };
  }
  d.log(`cluster: ${TARGET_LABEL[target.kind]}: ${w.name} (${socketCount(w)} sockets × ${w.subsPerSocket} subscriptions)`);
  return withTaskSession(d, target, seriesSetup('relay-notify', 0), w, meterOf(target), async (session) => {
    const step = await measureAtRate(session, d.scale, d.scale.cluster.stepMs, w.eventsPerSecond);
    const costs = entryCosts(step);
    logCosts(d, costs);
    return { ...base, skipped: null, openFailed: session.openFailed, step, ...costs };
  });
}

async function kneeRun(d: ClusterDeps, target: BenchTarget, w: TaskWorkload): Promise<ClusterKnee> {
  const none = {
    target: target.kind,
    streams: w.streams,
    steps: [],
    knee: null,
    kneeFail: null,
    bound: null,
    clientCores: null,
    costs: null,
  };
  if (Date.now() > d.deadline) {
    d.log(`cluster: ${TARGET_LABEL[target.kind]}: throughput: skipped, time budget spent`);
    return { ...none, skipped: 'time budget spent' };
  }
  const t = d.scale.cluster.throughput;
  d.log(`cluster: ${TARGET_LABEL[target.kind]}: ${w.name} (from ${t.firstRate}/s, doubling, then bisected)`);
  return withTaskSession(d, target, seriesSetup('relay-notify', 0), w, meterOf(target), async (session: TaskSession) => {
    const scale = { ...d.scale, stepMs: t.stepMs };
    const steps: StepResult[] = [];
    const run = async (rate: number): Promise<StepResult> => {
      const step = await runStep({ ...session.step, scale }, { perStream: 1 }, rate);
      steps.push(step);
      return step;
    };
    d.log('    warm-up step (not recorded):');
    await runStep({ ...session.step, scale }, { perStream: 1 }, Math.round(t.firstRate / 2));
    const { knee, kneeFail } = await searchKnee(run, t.firstRate, t.maxSteps, Date.now() + t.budgetMs, d.log);
    const costs = knee === null ? null : entryCosts(knee);
    if (costs !== null) logCosts(d, costs);
    return {
      ...none,
      skipped: null,
      steps,
      knee,
      kneeFail,
      bound: knee === null ? null : classifyBound(knee.serverCpu),
      clientCores: knee === null ? null : clientCores(knee),
      costs,
    };
  });
}

/** What the client side's core carried at a step: every Redis process, the load generator, the publisher. */
export function clientCores(step: StepResult): number {
  const redis = Object.values(step.groupCpu ?? {}).reduce((a, b) => a + b, 0);
  return redis + step.loadCpu + (step.publisherCpu ?? 0);
}

const fmtUs = (v: number | null): string => (v === null ? '—' : v.toFixed(1));

function logCosts(d: ClusterDeps, c: EntryCosts): void {
  d.log(
    `    redis primaries ${fmtUs(c.primariesUsPerEntry)} µs/entry, replicas ${fmtUs(c.replicasUsPerEntry)} µs/entry, relay ${fmtUs(c.relayUsPerEntry)} µs/entry`,
  );
}
