import type { LoadFleet } from './LoadFleet.js';
import type { Publisher } from './Publisher.js';
import { nowMs, publishOpenLoop } from './openLoop.js';
import type { PublishState } from './openLoop.js';
import { classifyBound } from './pinning.js';
import type { Bound } from './pinning.js';
import { commandCostPerEntry, fmtCommandCosts, parseCommandStats, sumCommandStats } from './commandStats.js';
import type { CommandCost } from './commandStats.js';
import { CpuMeter } from './procStats.js';
import type { FanoutWorkload, Scale } from './scale.js';

export interface StepResult {
  /** Offered deliveries/s (events/s × subscribers per stream). */
  readonly rate: number;
  readonly eventsPerSecond: number;
  readonly expected: number;
  readonly received: number;
  readonly deliveredRatio: number;
  /** Deliveries/s actually received over the step. */
  readonly achieved: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Cores used, from the first publish until every event arrived (or the grace period ended). */
  readonly serverCpu: number;
  readonly redisCpu: number;
  readonly loadCpu: number;
  /** The orchestrator, which runs the publisher (absent in runs before it was recorded). */
  readonly publisherCpu?: number;
  /**
   * p99 of the step's writes, intended send time to the write's reply, in ms: the write side's
   * share of the delivery p99 (absent for publishers whose writes have no reply of their own).
   */
  readonly writeP99Ms?: number;
  /**
   * p99 from each entry's write (its stream id's time, whole ms) to its delivery, in ms: the
   * server's share of the delivery p99 with the load client's own delay, read up to 1 ms high
   * (absent where frames carry no id).
   */
  readonly fromWriteP99Ms?: number;
  /** Seconds over which the CPU shares were measured (absent in runs before it was recorded). */
  readonly wallSeconds?: number;
  /** Cores used by each group of StepDeps.cpuGroups, summed over its processes (absent without groups). */
  readonly groupCpu?: Readonly<Record<string, number>>;
  /**
   * CPU time the server and its Redis spent per delivery, in microseconds: what a delivery costs,
   * which scheduling noise from other load on the machine changes far less than latency.
   */
  readonly serverUsPerDelivery: number;
  readonly pass: boolean;
  /** Wall time the step took, settling after a failure included (absent in runs before it was recorded). */
  readonly durationMs?: number;
  /** `INFO commandstats` growth over the step per delivered entry (absent without StepDeps.commandStats). */
  readonly redisCommands?: readonly CommandCost[];
}

export interface FanoutResult {
  readonly workload: string;
  readonly clients: number;
  readonly openFailed: number;
  readonly steps: StepResult[];
  readonly knee: StepResult | null;
  /**
   * The lowest failing rate above the knee: the knee lies in [knee, kneeFail). Absent in runs
   * before it was recorded (see kneeBracket, which derives it from the steps).
   */
  readonly kneeFail?: StepResult | null;
  /** Every step passed: the knee is at least this. */
  readonly kneeIsLowerBound: boolean;
  /** The server used less than 90% of a core at the knee: the load generator (or Redis) limited it. */
  readonly clientBound: boolean | null;
  /** The same verdict by name (absent in runs before it was recorded); see classifyBound. */
  readonly bound?: Bound | null;
  readonly halfKnee: StepResult | null;
  readonly fixed: StepResult | null;
}

export interface StepDeps {
  readonly fleet: LoadFleet;
  readonly publisher: Publisher;
  readonly state: PublishState;
  readonly serverPid: number;
  readonly redisPid: number | null;
  readonly scale: Scale;
  readonly log: (line: string) => void;
  /**
   * Bisecting the knee stops once this time (ms since the epoch) is near, keeping time for the
   * fixed-rate and half-knee steps; the bracket is then wider and says so.
   */
  readonly refineUntil?: number;
  /**
   * More processes metered over each step, summed per group: a Redis Cluster's primaries and its
   * replicas, which no single redisPid covers.
   */
  readonly cpuGroups?: Readonly<Record<string, readonly number[]>>;
  /** `INFO commandstats` text of each Redis metered (a cluster's primaries), read before and after each step. */
  readonly commandStats?: () => Promise<readonly string[]>;
}

const P99_LIMIT_MS = 100;
const DELIVERED_MIN = 0.999;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a step needs of a workload: subscribers per stream turn deliveries/s into events/s. */
export interface StepWorkload {
  readonly perStream: number;
}

/** Publishes open loop at `rate` deliveries/s for scale.stepMs and measures delivery, latency and CPU. */
export async function runStep(d: StepDeps, w: StepWorkload, rate: number): Promise<StepResult> {
  const stepStart = Date.now();
  const eventsPerSecond = rate / w.perStream;
  const startMs = nowMs() + 50;
  // Intended times travel rounded to a microsecond: a millisecond of slack keeps the first event in.
  await d.fleet.reset(startMs - 1);
  const fixedPids = [d.serverPid, d.redisPid ?? d.serverPid, process.pid, ...d.fleet.pids];
  const groups = Object.entries(d.cpuGroups ?? {});
  const statsBefore = await readCommandStats(d);
  const meter = new CpuMeter([...fixedPids, ...groups.flatMap(([, pids]) => pids)]);
  d.publisher.takeWriteLatency?.();
  const published = await publishOpenLoop(d.publisher, d.state, eventsPerSecond, startMs, d.scale.stepMs);
  const expected = published * w.perStream;
  const graceEnd = Date.now() + 1_500;
  let stats = await d.fleet.stats(false);
  while (stats.received < expected && Date.now() < graceEnd) {
    await sleep(50);
    stats = await d.fleet.stats(false);
  }
  // CPU over publishing and delivery: at low rates most of the work comes after the last publish.
  const { cores: cpu, wallSeconds } = meter.stop();
  const groupCpu = sumGroups(groups, cpu.slice(fixedPids.length));
  const statsAfter = await readCommandStats(d);
  stats = await d.fleet.stats(true);
  const h = stats.histogram;
  const us = (v: number | undefined) => (v ?? 0) / 1000;
  const p99Ms = us(h?.getValueAtPercentile(99));
  const writes = d.publisher.takeWriteLatency?.();
  const writeP99Ms = writes === undefined || writes.totalCount === 0 ? undefined : us(writes.getValueAtPercentile(99));
  const fromWriteP99Ms = stats.fromWrite === null ? undefined : us(stats.fromWrite.getValueAtPercentile(99));
  const deliveredRatio = expected === 0 ? 0 : stats.received / expected;
  const result: StepResult = {
    rate,
    eventsPerSecond,
    expected,
    received: stats.received,
    deliveredRatio,
    achieved: stats.received / (d.scale.stepMs / 1000),
    p50Ms: us(h?.getValueAtPercentile(50)),
    p99Ms,
    maxMs: us(h?.maxValue),
    serverCpu: cpu[0] ?? 0,
    redisCpu: d.redisPid === null ? 0 : (cpu[1] ?? 0),
    loadCpu: cpu.slice(3, fixedPids.length).reduce((a, b) => a + b, 0),
    publisherCpu: cpu[2] ?? 0,
    ...(writeP99Ms === undefined ? {} : { writeP99Ms }),
    ...(fromWriteP99Ms === undefined ? {} : { fromWriteP99Ms }),
    wallSeconds,
    ...(groupCpu === null ? {} : { groupCpu }),
    serverUsPerDelivery:
      stats.received === 0 ? 0 : (((cpu[0] ?? 0) + (d.redisPid === null ? 0 : (cpu[1] ?? 0))) * wallSeconds * 1e6) / stats.received,
    pass: deliveredRatio >= DELIVERED_MIN && p99Ms < P99_LIMIT_MS && stats.received > 0,
    ...(statsBefore === null || statsAfter === null ? {} : { redisCommands: commandCostPerEntry(statsBefore, statsAfter, stats.received) }),
  };
  d.log(
    `    ${fmtRate(rate)}/s offered: ${(deliveredRatio * 100).toFixed(2)}% delivered, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms, ` +
      (writeP99Ms === undefined ? '' : `writes p99 ${writeP99Ms.toFixed(1)} ms, `) +
      (fromWriteP99Ms === undefined ? '' : `from write p99 ${fromWriteP99Ms.toFixed(1)} ms, `) +
      `server ${(result.serverCpu * 100).toFixed(0)}% redis ${(result.redisCpu * 100).toFixed(0)}% load ${(result.loadCpu * 100).toFixed(0)}% ` +
      `publisher ${((result.publisherCpu ?? 0) * 100).toFixed(0)}%${Object.entries(groupCpu ?? {})
        .map(([name, cores]) => ` ${name} ${(cores * 100).toFixed(0)}%`)
        .join('')} ${result.pass ? 'pass' : 'FAIL'}`,
  );
  if (result.redisCommands !== undefined) d.log(`      redis per entry: ${fmtCommandCosts(result.redisCommands)}`);
  if (!result.pass) await settle(d);
  return { ...result, durationMs: Date.now() - stepStart };
}

/** The metered Redis nodes' command counters summed, or null when the step has none to read. */
async function readCommandStats(d: StepDeps): Promise<ReturnType<typeof sumCommandStats> | null> {
  if (d.commandStats === undefined) return null;
  return sumCommandStats((await d.commandStats()).map(parseCommandStats));
}

/** Each group's cores summed, from the cores of its processes in group order; null without groups. */
function sumGroups(groups: readonly (readonly [string, readonly number[]])[], cores: readonly number[]): Record<string, number> | null {
  if (groups.length === 0) return null;
  let at = 0;
  const out: Record<string, number> = {};
  for (const [name, pids] of groups) {
    out[name] = cores.slice(at, at + pids.length).reduce((a, b) => a + b, 0);
    at += pids.length;
  }
  return out;
}

/** After an overloaded step, waits until the backlog has drained so it does not weigh on the next. */
async function settle(d: StepDeps): Promise<void> {
  const end = Date.now() + 3_000;
  let last = -1;
  while (Date.now() < end) {
    const { received } = await d.fleet.stats(false);
    if (received === last) return;
    last = received;
    await sleep(300);
  }
}

/**
 * The knee is bisected (geometric midpoint) until the first failing rate is at most this factor
 * above the last passing one: three midpoints after a doubling (2 → 1.41 → 1.19 → 1.09).
 */
export const KNEE_BRACKET = 1.12;

/** Time kept after the bisection for the fixed-rate and half-knee steps (a failing step can take ~5 s). */
const AFTER_KNEE_RESERVE_MS = 10_000;

/** What the knee search needs of a step. */
export interface KneeStep {
  readonly rate: number;
  readonly pass: boolean;
}

/**
 * Steps the offered rate up (doubling from `firstRate`, at most `maxSteps`) until a step fails
 * (if the first fails, halves down to firstRate/16 until one passes), then bisects between the
 * last pass and the first failure until they are within KNEE_BRACKET of each other, or until
 * `refineUntil` (ms since the epoch) less the reserve for the steps after the knee has come.
 */
export async function searchKnee<S extends KneeStep>(
  run: (rate: number) => Promise<S>,
  firstRate: number,
  maxSteps: number,
  refineUntil: number | undefined,
  log: (line: string) => void,
  now: () => number = Date.now,
): Promise<{ knee: S | null; kneeFail: S | null }> {
  let knee: S | null = null;
  let kneeFail: S | null = null;
  let rate = firstRate;
  for (let i = 0; i < maxSteps; i++) {
    const step = await run(rate);
    if (!step.pass) {
      kneeFail = step;
      break;
    }
    knee = step;
    rate *= 2;
  }
  if (knee === null) {
    // Even the first step failed: look below it.
    for (let r = firstRate / 2; r >= firstRate / 16 && knee === null; r /= 2) {
      const step = await run(r);
      if (step.pass) knee = step;
      else kneeFail = step;
    }
  }
  if (knee !== null && kneeFail !== null) {
    while (kneeFail.rate / knee.rate > KNEE_BRACKET) {
      if (refineUntil !== undefined && now() > refineUntil - AFTER_KNEE_RESERVE_MS) {
        log(`    time budget: knee left between ${fmtRate(knee.rate)} and ${fmtRate(kneeFail.rate)}`);
        break;
      }
      const between = await run(Math.round(Math.sqrt(knee.rate * kneeFail.rate)));
      if (between.pass) knee = between;
      else kneeFail = between;
    }
  }
  return { knee, kneeFail: knee === null ? null : kneeFail };
}

/** Finds the knee (searchKnee), then measures the fixed rate and half the knee. */
export async function measureFanout(d: StepDeps, w: FanoutWorkload, openFailed: number): Promise<FanoutResult> {
  const steps: StepResult[] = [];
  const run = async (rate: number): Promise<StepResult> => {
    const found = steps.find((s) => Math.abs(s.rate - rate) / rate < 0.01);
    if (found !== undefined) return found;
    const step = await runStep(d, w, rate);
    steps.push(step);
    return step;
  };
  // One unrecorded step first: right after thousands of subscribes, the first step of a workload
  // (JIT, GC of the subscribe burst) failed for every server alike and capped the knee below it.
  d.log('    warm-up step (not recorded):');
  await runStep(d, w, Math.round(d.scale.firstRate / 2));
  const { knee, kneeFail } = await searchKnee(run, d.scale.firstRate, d.scale.maxSteps, d.refineUntil, d.log);
  const fixed = await run(d.scale.fixedRate);
  const halfKnee = knee === null ? null : await run(Math.round(knee.rate / 2));
  return {
    workload: w.name,
    clients: w.clients,
    openFailed,
    steps,
    knee,
    kneeFail,
    kneeIsLowerBound: knee !== null && kneeFail === null,
    clientBound: knee === null ? null : classifyBound(knee.serverCpu) === 'client',
    bound: knee === null ? null : classifyBound(knee.serverCpu),
    halfKnee,
    fixed,
  };
}

/**
 * The knee as a bracket [pass, fail): `fail` is the lowest failing rate above the knee, null when
 * every step up to the last passed. Derived from the steps for runs that did not record it.
 */
export function kneeBracket(r: FanoutResult): { pass: number; fail: number | null } | null {
  if (r.knee === null) return null;
  if (r.kneeFail !== undefined) return { pass: r.knee.rate, fail: r.kneeFail?.rate ?? null };
  const above = r.steps.filter((s) => !s.pass && s.rate > (r.knee?.rate ?? Infinity)).map((s) => s.rate);
  return { pass: r.knee.rate, fail: above.length === 0 ? null : Math.min(...above) };
}

export function fmtRate(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
}
