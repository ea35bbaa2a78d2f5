import { z } from 'zod';
import { SERVER_KINDS } from './loadgen/protocols.js';
import type { ServerKind } from './loadgen/protocols.js';

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
  readonly memory: { readonly waves: number; readonly perWave: number };
  readonly storm: { readonly clients: number; readonly streams: number; readonly eventsPerSecond: number };
  readonly workers: number;
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
  memory: { waves: 5, perWave: 2_000 },
  storm: { clients: 10_000, streams: 100, eventsPerSecond: 200 },
  workers: 2,
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
  memory: { waves: 2, perWave: 200 },
  storm: { clients: 300, streams: 10, eventsPerSecond: 50 },
  workers: 1,
};

const BenchEnv = z.object({
  BENCH_SCALE: z.enum(['quick', 'full']).default('full'),
  /** Comma-separated subset of servers, e.g. `relay,uws`. */
  BENCH_SERVERS: z
    .string()
    .default(SERVER_KINDS.join(','))
    .transform((s) => s.split(',').map((k) => k.trim()))
    .pipe(z.array(z.enum(SERVER_KINDS)).min(1)),
  /** Comma-separated parts: fanout, memory, storm. */
  BENCH_PARTS: z
    .string()
    .default('fanout,memory,storm')
    .transform((s) => s.split(',').map((k) => k.trim()))
    .pipe(z.array(z.enum(['fanout', 'memory', 'storm'])).min(1)),
  /** Only the fan-out workload of this name, else those whose name contains it. */
  BENCH_WORKLOAD: z.string().optional(),
  /** Write a CPU profile of every relay process into this directory. */
  BENCH_PROFILE_DIR: z.string().optional(),
  BENCH_OUT_DIR: z.string().optional(),
});

export interface BenchOptions {
  readonly scale: Scale;
  readonly servers: readonly ServerKind[];
  readonly parts: ReadonlySet<'fanout' | 'memory' | 'storm'>;
  readonly profileDir: string | undefined;
  readonly outDir: string | undefined;
}

export function parseBenchEnv(env: NodeJS.ProcessEnv): BenchOptions {
  const parsed = BenchEnv.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `bad benchmark environment (BENCH_SCALE=quick|full, BENCH_SERVERS=relay,socketio,wsrelay,uws, BENCH_PARTS=fanout,memory,storm): ${parsed.error.message}`,
    );
  }
  const e = parsed.data;
  const base = e.BENCH_SCALE === 'quick' ? QUICK : FULL;
  const filter = e.BENCH_WORKLOAD;
  const exact = base.fanout.filter((w) => w.name === filter);
  const chosen = exact.length > 0 ? exact : base.fanout.filter((w) => filter === undefined || w.name.includes(filter));
  const scale = { ...base, fanout: chosen };
  return { scale, servers: e.BENCH_SERVERS, parts: new Set(e.BENCH_PARTS), profileDir: e.BENCH_PROFILE_DIR, outDir: e.BENCH_OUT_DIR };
}

/** Stream indices of each client: subscriptions spread so that every stream gets `perStream`. */
export function assignStreams(w: FanoutWorkload): number[][] {
  const perClient = Math.max(1, Math.round((w.streams * w.perStream) / w.clients));
  return Array.from({ length: w.clients }, (_, c) => Array.from({ length: perClient }, (_j, j) => (c * perClient + j) % w.streams));
}
