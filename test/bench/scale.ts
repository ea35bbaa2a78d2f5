import { z } from 'zod';
import { DEFAULT_SERVER_KINDS, SERVER_KINDS } from './loadgen/protocols.js';
import type { ServerKind } from './loadgen/protocols.js';
import { JETSTREAM_SERIES, NAMED_TASK_SERIES, TASK_SUBS_PER_SOCKET, TASK_WORKLOADS, taskWorkloadName } from './taskWorkloads.js';
import type { JetStreamReplicas, TaskSeries, TaskWorkload } from './taskWorkloads.js';

export interface FanoutWorkload {
  readonly name: string;
  readonly streams: number;
  /** Subscribers of each stream. */
  readonly perStream: number;
  /** Sockets; when fewer than streams × perStream, each socket holds several subscriptions. */
  readonly clients: number;
}

export interface Scale {
  readonly name: 'quick' | 'full';
  readonly fanout: readonly FanoutWorkload[];
  /** Deliveries/s of the first step; each next step doubles it. */
  readonly firstRate: number;
  readonly maxSteps: number;
  readonly stepMs: number;
  /** The fixed rate (deliveries/s) at which every server's p50/p99 are compared. */
  readonly fixedRate: number;
  /** `warmup` connections open (uncounted) before the first point, then `waves` of `perWave`. */
  readonly memory: { readonly warmup: number; readonly waves: number; readonly perWave: number };
  readonly storm: { readonly clients: number; readonly streams: number; readonly eventsPerSecond: number };
  readonly workers: number;
  /** Per-task-stream workloads, each measured at its one fixed rate for `stepMs`. */
  readonly tasks: { readonly workloads: readonly TaskWorkload[]; readonly stepMs: number };
  /** One Redis against a Redis Cluster (BENCH_PARTS=cluster). */
  readonly cluster: ClusterScale;
}

export interface ClusterScale {
  /** Task workloads measured at their fixed rate for `stepMs` on each target. */
  readonly workloads: readonly TaskWorkload[];
  readonly stepMs: number;
  /** The throughput step: the knee (searchKnee) on this many streams × 1, steps of `stepMs`, at most `budgetMs` per target. */
  readonly throughput: {
    readonly streams: number;
    readonly firstRate: number;
    readonly maxSteps: number;
    readonly stepMs: number;
    readonly budgetMs: number;
  };
  readonly primaries: number;
  /** BENCH_CLUSTER_REPLICAS: 1 (the default, as a cluster that survives a lost primary runs) or 0. */
  readonly replicasPerPrimary: number;
}

const FULL: Scale = {
  name: 'full',
  fanout: [
    { name: '1 stream × 1k', streams: 1, perStream: 1_000, clients: 1_000 },
    { name: '1 stream × 5k', streams: 1, perStream: 5_000, clients: 5_000 },
    { name: '1 stream × 10k', streams: 1, perStream: 10_000, clients: 10_000 },
    { name: '100 streams × 10', streams: 100, perStream: 10, clients: 1_000 },
    { name: '100 streams × 100', streams: 100, perStream: 100, clients: 10_000 },
    { name: '1,000 streams × 10', streams: 1_000, perStream: 10, clients: 10_000 },
    // 100k subscriptions held by 10k sockets (10 each): the file-descriptor limit here is 20k.
    { name: '1,000 streams × 100', streams: 1_000, perStream: 100, clients: 10_000 },
  ],
  firstRate: 25_000,
  maxSteps: 7,
  stepMs: 1_500,
  fixedRate: 25_000,
  memory: { warmup: 2_000, waves: 5, perWave: 2_000 },
  storm: { clients: 10_000, streams: 100, eventsPerSecond: 200 },
  workers: 2,
  // 5 s at 1k/s is 5,000 entries: enough CPU ticks (10 ms each) for the per-entry cost to mean something.
  tasks: { workloads: TASK_WORKLOADS, stepMs: 5_000 },
  cluster: {
    workloads: TASK_WORKLOADS.filter((w) => w.streams === 10_000),
    stepMs: 5_000,
    throughput: { streams: 10_000, firstRate: 20_000, maxSteps: 5, stepMs: 1_500, budgetMs: 60_000 },
    primaries: 3,
    replicasPerPrimary: 1,
  },
};

const QUICK: Scale = {
  name: 'quick',
  fanout: [
    { name: '1 stream × 200', streams: 1, perStream: 200, clients: 200 },
    { name: '10 streams × 20 (2 subs/socket)', streams: 10, perStream: 20, clients: 100 },
  ],
  firstRate: 10_000,
  maxSteps: 3,
  stepMs: 1_000,
  fixedRate: 10_000,
  memory: { warmup: 200, waves: 2, perWave: 200 },
  storm: { clients: 300, streams: 10, eventsPerSecond: 50 },
  workers: 1,
  tasks: {
    workloads: TASK_WORKLOADS.filter((w) => w.name === taskWorkloadName(1_000, 1_000) || w.name === taskWorkloadName(10_000, 1_000)),
    stepMs: 1_500,
  },
  cluster: {
    workloads: [{ name: taskWorkloadName(1_000, 1_000), streams: 1_000, eventsPerSecond: 1_000, subsPerSocket: TASK_SUBS_PER_SOCKET }],
    stepMs: 1_500,
    throughput: { streams: 1_000, firstRate: 5_000, maxSteps: 2, stepMs: 1_000, budgetMs: 15_000 },
    primaries: 3,
    replicasPerPrimary: 1,
  },
};

export const BENCH_PARTS = ['fanout', 'memory', 'storm', 'tasks', 'cluster'] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

const JETSTREAM_REPLICAS_MESSAGE =
  'BENCH_JETSTREAM_REPLICAS must be 1, 3 or 1,3: replicas of the relay-jetstream series’ stream (1: one nats-server, 3: a 3-node cluster)';

const BenchEnv = z.object({
  BENCH_SCALE: z.enum(['quick', 'full']).default('full'),
  /** Comma-separated subset of servers, e.g. `relay,uws`. */
  BENCH_SERVERS: z
    .string()
    .default(DEFAULT_SERVER_KINDS.join(','))
    .transform((s) => s.split(',').map((k) => k.trim()))
    .pipe(z.array(z.enum(SERVER_KINDS)).min(1)),
  /** Comma-separated parts: fanout, memory, storm, tasks, cluster (cluster only when asked for). */
  BENCH_PARTS: z
    .string()
    .default(BENCH_PARTS.filter((p) => p !== 'cluster').join(','))
    .transform((s) => s.split(',').map((k) => k.trim()))
    .pipe(z.array(z.enum(BENCH_PARTS)).min(1)),
  /** Only the fan-out or task workload of this name, else those whose name contains it. */
  BENCH_WORKLOAD: z.string().optional(),
  /**
   * Comma-separated task series (relay-batch, relay-notify, relay-jetstream, wsrelay, socketio):
   * only these of the chosen servers' series run, e.g. one read mode while profiling it. Without
   * it every series of the chosen servers runs but relay-jetstream, which runs only when named
   * (as one series per replica count of BENCH_JETSTREAM_REPLICAS).
   */
  BENCH_SERIES: z
    .string()
    .optional()
    .transform((s) => s?.split(',').map((k) => k.trim()))
    .pipe(z.array(z.enum(NAMED_TASK_SERIES)).min(1).optional()),
  /**
   * Replicas of the relay-jetstream series' stream, comma-separated to run several in one run:
   * 1 (default; one standalone nats-server), 3 (an R3 stream on a 3-node cluster, reported as the
   * series relay-jetstream-r3, its log's CPU summed over the three nats-servers), or `1,3`.
   * Only with BENCH_SERIES naming relay-jetstream.
   */
  BENCH_JETSTREAM_REPLICAS: z
    .string()
    .regex(/^ *[13] *(, *[13] *)*$/, JETSTREAM_REPLICAS_MESSAGE)
    .optional()
    .transform((s) => (s === undefined ? undefined : [...new Set(s.split(',').map((r) => Number(r.trim()) as JetStreamReplicas))])),
  /** `auto`: pin the server to one core and the rest to the others when taskset and 2 cores allow it. */
  BENCH_PIN: z.enum(['auto', 'off']).default('auto'),
  /** Write a CPU profile of every relay process into this directory. */
  BENCH_PROFILE_DIR: z.string().optional(),
  BENCH_OUT_DIR: z.string().optional(),
  /**
   * Rounds of the task workloads: with N > 1 each workload measures the chosen series N times,
   * alternating their order, and reports medians (measureTaskRounds); 1 measures as always.
   */
  BENCH_ROUNDS: z
    .string()
    .regex(/^[1-9][0-9]*$/, 'BENCH_ROUNDS must be a whole number of rounds, 1 or more')
    .default('1')
    .transform(Number),
  /**
   * Length of each task workload's recorded step, in ms (default 5,000): a longer one leaves
   * room to attach perf, strace or /proc sampling to the server in the middle of it.
   */
  BENCH_TASK_STEP_MS: z
    .string()
    .regex(/^[1-9][0-9]*$/, 'BENCH_TASK_STEP_MS must be a whole number of milliseconds')
    .optional()
    .transform((s) => (s === undefined ? undefined : Number(s))),
  /** Replicas per primary of the cluster part's Redis Cluster. */
  BENCH_CLUSTER_REPLICAS: z.enum(['0', '1']).default('1').transform(Number),
});

export interface BenchOptions {
  readonly scale: Scale;
  readonly servers: readonly ServerKind[];
  readonly parts: ReadonlySet<BenchPart>;
  /** The task series to run; null: every series of the chosen servers but the opt-in ones (OPT_IN_TASK_SERIES). */
  readonly series: readonly TaskSeries[] | null;
  readonly pin: 'auto' | 'off';
  /** Replicas the relay-jetstream series runs with (BENCH_JETSTREAM_REPLICAS), each as its own series in `series`. */
  readonly jetStreamReplicas: readonly JetStreamReplicas[];
  /** Rounds of the task workloads (BENCH_ROUNDS): 1, or the series alternated that many times per workload. */
  readonly rounds: number;
  readonly profileDir: string | undefined;
  readonly outDir: string | undefined;
}

export function parseBenchEnv(env: NodeJS.ProcessEnv): BenchOptions {
  const parsed = BenchEnv.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `bad benchmark environment (BENCH_SCALE=quick|full, BENCH_SERVERS=relay,socketio,wsrelay,uws,uwsfloor, BENCH_PARTS=fanout,memory,storm,tasks,cluster, BENCH_SERIES=${NAMED_TASK_SERIES.join(',')}, BENCH_JETSTREAM_REPLICAS=1|3|1,3, BENCH_PIN=auto|off, BENCH_ROUNDS=1|2|…, BENCH_TASK_STEP_MS=<ms>, BENCH_CLUSTER_REPLICAS=0|1): ${parsed.error.message}`,
    );
  }
  const e = parsed.data;
  const named = e.BENCH_SERIES ?? null;
  if (e.BENCH_JETSTREAM_REPLICAS !== undefined && !(named ?? []).includes('relay-jetstream')) {
    throw new Error(
      `bad benchmark environment: BENCH_JETSTREAM_REPLICAS=${env.BENCH_JETSTREAM_REPLICAS ?? ''} applies to the relay-jetstream series, which runs only when BENCH_SERIES names it (e.g. BENCH_SERIES=relay-notify,relay-jetstream)`,
    );
  }
  const jetStreamReplicas = e.BENCH_JETSTREAM_REPLICAS ?? [1];
  const base = e.BENCH_SCALE === 'quick' ? QUICK : FULL;
  const scale: Scale = {
    ...base,
    fanout: chooseWorkloads(base.fanout, e.BENCH_WORKLOAD),
    tasks: {
      workloads: chooseWorkloads(base.tasks.workloads, e.BENCH_WORKLOAD),
      stepMs: e.BENCH_TASK_STEP_MS ?? base.tasks.stepMs,
    },
    cluster: {
      ...base.cluster,
      workloads: chooseWorkloads(base.cluster.workloads, e.BENCH_WORKLOAD),
      replicasPerPrimary: e.BENCH_CLUSTER_REPLICAS,
    },
  };
  return {
    scale,
    servers: e.BENCH_SERVERS,
    parts: new Set(e.BENCH_PARTS),
    series:
      named === null ? null : named.flatMap((s) => (s === 'relay-jetstream' ? jetStreamReplicas.map((r) => JETSTREAM_SERIES[r]) : [s])),
    jetStreamReplicas,
    pin: e.BENCH_PIN,
    rounds: e.BENCH_ROUNDS,
    profileDir: e.BENCH_PROFILE_DIR,
    outDir: e.BENCH_OUT_DIR,
  };
}

/** The workloads named `filter` exactly, else those whose name contains it; all without a filter. */
export function chooseWorkloads<W extends { readonly name: string }>(all: readonly W[], filter: string | undefined): W[] {
  const exact = all.filter((w) => w.name === filter);
  return exact.length > 0 ? exact : all.filter((w) => filter === undefined || w.name.includes(filter));
}

/** Stream indices of each client: subscriptions spread so that every stream gets `perStream`. */
export function assignStreams(w: FanoutWorkload): number[][] {
  const perClient = Math.max(1, Math.round((w.streams * w.perStream) / w.clients));
  return Array.from({ length: w.clients }, (_, c) => Array.from({ length: perClient }, (_j, j) => (c * perClient + j) % w.streams));
}
