import { startBenchServer } from './BenchServer.js';
import type { BenchContext } from './BenchServer.js';
import type { LoadFleet } from './LoadFleet.js';
import { createPublisher } from './Publisher.js';
import type { Publisher } from './Publisher.js';
import { runStep } from './fanoutBench.js';
import type { StepDeps, StepResult } from './fanoutBench.js';
import { publishState } from './openLoop.js';
import type { Scale } from './scale.js';
import { taskClients } from './taskWorkloads.js';
import type { SeriesSetup, TaskWorkload } from './taskWorkloads.js';

export interface SessionDeps {
  readonly ctx: Omit<BenchContext, 'redisUrl'>;
  readonly fleet: LoadFleet;
  readonly mintTokens: (redisUrl: string, streams: readonly string[]) => Promise<string[]>;
  readonly log: (line: string) => void;
}

/** Where the session's streams live (BenchTarget, a bare redis-server, or a JetStream stream). */
export interface SessionTarget {
  /** What the tokens' `redis` claim names. */
  readonly url: string;
  /** The Redis of the relay's RELAY_REDIS_ALLOWLIST when `url` is not a Redis; default `url`. */
  readonly redisUrl?: string;
  /** Laid over the server's environment (a JetStream target's RELAY_JETSTREAM_ALLOWLIST). */
  readonly serverEnv?: Readonly<Record<string, string>>;
  /** The writer for a target createPublisher does not write to (JetStream); default createPublisher's. */
  publisher?(): Publisher;
  flush(): Promise<void>;
  seed(streams: readonly string[]): Promise<void>;
}

/** A server under test with one subscriber on every stream of a task workload, ready to publish to. */
export interface TaskSession {
  /** For runStep: everything but the scale. */
  readonly step: Omit<StepDeps, 'scale'>;
  readonly openFailed: number;
}

export const OPEN_TIMEOUT_MS = 120_000;
/**
 * An unrecorded first step per workload: the first one after thousands of subscribes carries their
 * GC and JIT. A relay whose last `subscribed` had gone out still stalled its loop for up to 190 ms
 * in the second after (monitorEventLoopDelay, 10,000 × 1: reading each newly subscribed key once,
 * collecting the burst's garbage), and quiet from the next: one second of warm-up let that spill
 * into the recorded step now and then, which showed as a p99 of 20+ ms in one run and 6 in the next.
 */
const WARMUP_MS = 3_000;

/**
 * Empties and seeds the target, starts a fresh server, subscribes one subscriber per stream
 * (TASK_SUBS_PER_SOCKET per socket), opens a publisher, and runs `fn`; stops it all after.
 * `meter` says which Redis processes each step measures; `ready` runs once every socket is
 * subscribed, before the publisher opens.
 */
export async function withTaskSession<T>(
  d: SessionDeps,
  target: SessionTarget,
  setup: SeriesSetup,
  w: TaskWorkload,
  meter: Pick<StepDeps, 'redisPid' | 'cpuGroups' | 'commandStats'>,
  fn: (session: TaskSession) => Promise<T>,
  ready?: () => Promise<void>,
): Promise<T> {
  await target.flush();
  const streams = Array.from({ length: w.streams }, (_, s) => `task:${s}`);
  await target.seed(streams);
  const tokens = setup.kind === 'relay' ? await d.mintTokens(target.url, streams) : [];
  const server = await startBenchServer(setup.kind, { ...d.ctx, redisUrl: target.redisUrl ?? target.url }, 0, {
    ...setup.env,
    ...target.serverEnv,
  });
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
    await ready?.();
    // The server and the load workers collect their garbage now, outside the steps: the server's
    // from the subscribe burst (its major GC fell into the recorded step now and then; a relay's
    // main thread waited 78 ms on one, at 10,000 × 1 on its one pinned core), the workers' from
    // every workload before (LoadFleet.collectGarbage). Those are stalls of the bench's
    // compressed timeline, not of delivery; every server under test gets the same.
    server.service.signal('SIGUSR2');
    d.fleet.collectGarbage();
    const publisher = target.publisher?.() ?? (await createPublisher(setup.kind, target.url, server.port));
    try {
      const step = { fleet: d.fleet, publisher, state: publishState(streams), serverPid: server.pid, log: d.log, ...meter };
      return await fn({ step, openFailed: opened.failed });
    } finally {
      await d.fleet.closeAll();
      await publisher.close();
    }
  } finally {
    if (process.env.BENCH_DEBUG === '1') process.stderr.write(server.service.output());
    await server.service.stop(10_000);
  }
}

/** One unrecorded warm-up step, then the recorded step at `eventsPerSecond` for `stepMs`. */
export async function measureAtRate(session: TaskSession, scale: Scale, stepMs: number, eventsPerSecond: number): Promise<StepResult> {
  session.step.log('    warm-up step (not recorded):');
  await runStep({ ...session.step, scale: { ...scale, stepMs: WARMUP_MS } }, { perStream: 1 }, eventsPerSecond);
  return runStep({ ...session.step, scale: { ...scale, stepMs } }, { perStream: 1 }, eventsPerSecond);
}
