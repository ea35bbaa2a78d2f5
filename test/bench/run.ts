import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { appNodeVersion, repoRoot, startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { commandStatsOf } from './BenchTarget.js';
import { startBenchServer } from './BenchServer.js';
import type { BenchContext, BenchServer } from './BenchServer.js';
import { LoadFleet } from './LoadFleet.js';
import { createPublisher } from './Publisher.js';
import { measureFanout } from './fanoutBench.js';
import type { ServerKind } from './loadgen/protocols.js';
import { measureMemory } from './memoryBench.js';
import { detectPinning, pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import type { MemoryResult } from './memoryBench.js';
import { publishState } from './openLoop.js';
import { writeReport } from './report.js';
import type { BenchResults, ServerResults } from './report.js';
import { assignStreams, parseBenchEnv } from './scale.js';
import { measureStorm } from './stormBench.js';
import type { StormResult } from './stormBench.js';
import { parseFdLimit, seriesOf, serverSetup } from './taskWorkloads.js';
import { measureTasks } from './tasksBench.js';
import { measureTaskRounds } from './measureTaskRounds.js';
import { measureCluster } from './clusterBench.js';
import type { ClusterResults } from './clusterBench.js';
import { BENCH_AUDIENCE as AUDIENCE, BENCH_ISSUER as ISSUER, mintBenchTokens as mintTokens } from './mintBenchTokens.js';
import { writeClusterReport } from './renderCluster.js';

// `pnpm bench`: the relay against Socket.IO, a plain ws relay and the uWS ceiling, one server at
// a time, each in a fresh process, under the same load generator. See docs/benchmarks.md.

const RUN_BUDGET_MS = 15 * 60_000;
/** The task workloads' own budget, after the rest: no workload starts once it is spent. */
const TASKS_BUDGET_MS = 12 * 60_000;
/** The cluster part's own budget: no measurement starts once it is spent. */
const CLUSTER_BUDGET_MS = 8 * 60_000;
/** Assumed when /proc/self/limits cannot be read: the limit of the machine this was written on. */
const DEFAULT_FD_LIMIT = 20_000;
/**
 * Time kept for each server still to come: a full server (fan-out with its knee bisected, memory,
 * storm) took about 115–185 s on the 2-core machine. A server may use the slack the servers before
 * it left, never this reserve of the ones after it.
 */
const SERVER_RESERVE_MS = 150_000;
/** Time kept for each fan-out workload still to come when deciding whether to bisect a knee further. */
const WORKLOAD_RESERVE_MS = 20_000;

const startedAt = Date.now();
const log = (line: string): void => {
  process.stdout.write(`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
};

function fdLimit(): number {
  try {
    return parseFdLimit(readFileSync('/proc/self/limits', 'utf8')) ?? DEFAULT_FD_LIMIT;
  } catch (error) {
    log(`cannot read /proc/self/limits (${String(error)}): assuming ${DEFAULT_FD_LIMIT} file descriptors`);
    return DEFAULT_FD_LIMIT;
  }
}

async function main(): Promise<void> {
  const options = parseBenchEnv(process.env);
  const { scale } = options;
  const outDir = options.outDir ?? join(repoRoot(), 'test/bench/results');
  const key = await generateSigningKey('ES256', 'bench-key');
  const { d: _private, ...publicJwk } = key;
  const jwksFile = join(mkdtempSync(join(tmpdir(), 'streamgate-bench-')), 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwk] }));
  const load1 = loadavg()[0] ?? 0;
  log(`scale ${scale.name}, servers ${options.servers.join(', ')}, ${cpus().length} cores, load average ${load1.toFixed(2)} at start`);
  const pinning = detectPinning(options.pin);
  // This process publishes (and runs Socket.IO's emitting backend): it belongs to the client side.
  if (pinning.pinned) pinProcess(process.pid, pinning.plan.clientCpus);
  log(
    pinning.pinned
      ? `pinned: server under test on cpu ${pinning.plan.serverCpus}, load generator, publisher and Redis on cpu ${pinning.plan.clientCpus}`
      : `not pinned: ${pinning.reason}`,
  );

  const results: BenchResults = {
    scale: scale.name,
    startedAt: new Date(startedAt).toISOString(),
    durationS: 0,
    machine: {
      cores: cpus().length,
      model: cpus()[0]?.model ?? 'unknown',
      // The servers' Node (every server under test runs on it), then the load's when it differs.
      node: appNodeVersion() === process.version ? process.version : `${appNodeVersion()} (servers; load on ${process.version})`,
      loadAverageAtStart: load1,
      loadAverageAtEnd: 0,
    },
    scaleConfig: scale,
    socketioDefaults: null,
    servers: {},
    pinning,
    tasks: [],
  };

  let cluster: ClusterResults | null = null;
  const fleet = LoadFleet.start(scale.workers);
  try {
    if (pinning.pinned) for (const pid of fleet.pids) pinProcess(pid, pinning.plan.clientCpus);
    const ctx = { jwksFile, audience: AUDIENCE, issuer: ISSUER, profileDir: options.profileDir, pinning };
    const classic = options.parts.has('fanout') || options.parts.has('memory') || options.parts.has('storm');
    for (const [i, kind] of classic ? options.servers.entries() : []) {
      // Each server may use what is left of the budget but the reserve of those after it, so none is starved by another.
      const deadline = startedAt + RUN_BUDGET_MS - (options.servers.length - i - 1) * SERVER_RESERVE_MS;
      results.servers[kind] = await benchServer(kind, options.parts, scale, key, ctx, fleet, results, deadline);
    }
    if (options.parts.has('tasks')) {
      const deps = {
        series: seriesOf(options.servers, options.series),
        ctx,
        fleet,
        scale,
        fdLimit: fdLimit(),
        mintTokens: (redisUrl: string, streams: readonly string[]) => mintTokens(key, redisUrl, streams),
        log,
        deadline: Date.now() + TASKS_BUDGET_MS,
      };
      // Which JetStream series run says which replica count each log column is (an R3 one sums 3 nats-servers).
      log(`task series: ${deps.series.join(', ') || 'none of the chosen servers'}`);
      // One round keeps the series-by-series order (and results.json) of every run before rounds existed.
      if (options.rounds > 1) {
        log(`task workloads: ${options.rounds} rounds per workload, the series alternating`);
        results.tasksRounds = options.rounds;
        results.tasks = await measureTaskRounds({ ...deps, rounds: options.rounds });
      } else {
        results.tasks = await measureTasks(deps);
      }
    }
    if (options.parts.has('cluster')) {
      cluster = await measureCluster({
        ctx,
        fleet,
        scale,
        mintTokens: (redisUrl, streams) => mintTokens(key, redisUrl, streams),
        log,
        deadline: Date.now() + CLUSTER_BUDGET_MS,
      });
    }
  } finally {
    fleet.stop();
  }
  results.durationS = (Date.now() - startedAt) / 1000;
  results.machine.loadAverageAtEnd = loadavg()[0] ?? 0;
  // A run of the cluster part alone leaves results.md and results.json as they were.
  const files = [...options.parts].every((p) => p === 'cluster') ? [] : writeReport(results, outDir);
  if (cluster !== null) {
    const { startedAt: at, durationS, machine, scale: name } = results;
    files.push(...writeClusterReport({ startedAt: at, durationS, machine, scale: name, pinning, config: scale.cluster, cluster }, outDir));
  }
  log(`wrote ${files.join(', ')}`);
}

async function benchServer(
  kind: ServerKind,
  parts: ReadonlySet<string>,
  scale: ReturnType<typeof parseBenchEnv>['scale'],
  key: PrivateJwk,
  baseCtx: Omit<BenchContext, 'redisUrl'>,
  fleet: LoadFleet,
  results: BenchResults,
  deadline: number,
): Promise<ServerResults> {
  const overBudget = (what: string, reserveMs = 0): boolean => {
    if (Date.now() < deadline - reserveMs) return false;
    log(`${kind}: time budget spent, skipping ${what}`);
    return true;
  };
  const out: ServerResults = { fanout: [], memory: null, storm: null };
  const setup = serverSetup(kind);
  const redis = await startRedis({ args: setup.redisArgs });
  const ctx: BenchContext = { ...baseCtx, redisUrl: redis.url, serverEnv: setup.env };
  pinRedis(redis, ctx.pinning);
  try {
    if (parts.has('fanout')) {
      // One fresh process for all fan-out workloads of a server; each workload has its own streams.
      await withServer(kind, ctx, redis, async (server) => {
        if (kind === 'socketio') results.socketioDefaults = socketioDefaults(server.listeningLine);
        // Keep time for the memory waves and the storm, which come after.
        const reserveMs = (parts.has('memory') ? 25_000 : 0) + (parts.has('storm') ? 45_000 : 0);
        for (const [i, w] of scale.fanout.entries()) {
          if (overBudget(w.name, reserveMs)) break;
          // A workload bisects its knee only while that leaves the reserve of the workloads after it.
          const refineUntil = deadline - reserveMs - (scale.fanout.length - i - 1) * WORKLOAD_RESERVE_MS;
          log(`${kind}: ${w.name}`);
          const streams = Array.from({ length: w.streams }, (_, s) => `bench:w${i}:${s}`);
          const tokens = kind === 'relay' ? await mintTokens(key, redis.url, streams) : [];
          const t0 = Date.now();
          const opened = await fleet.open({
            kind,
            port: server.port,
            streams,
            tokens,
            clients: assignStreams(w),
            trackSeq: false,
            reconnect: false,
            timeoutMs: 60_000,
          });
          log(`  ${opened.ready} clients subscribed in ${Date.now() - t0} ms${opened.failed > 0 ? `, ${opened.failed} failed` : ''}`);
          const publisher = await createPublisher(kind, redis.url, server.port);
          try {
            const deps = {
              fleet,
              publisher,
              state: publishState(streams),
              serverPid: server.pid,
              redisPid: redisPid(kind, redis),
              ...(kind === 'uws' ? {} : { commandStats: async () => [await commandStatsOf(redis.client())] }),
              scale,
              log,
              refineUntil,
            };
            out.fanout.push(await measureFanout(deps, w, opened.failed));
          } finally {
            await fleet.closeAll();
            await publisher.close();
          }
        }
      });
    }
    if (parts.has('memory') && !overBudget('memory', parts.has('storm') ? 30_000 : 0)) {
      log(`${kind}: idle connections in ${scale.memory.waves} waves of ${scale.memory.perWave}`);
      out.memory = await withServer(kind, ctx, redis, async (server): Promise<MemoryResult> => {
        const stream = 'bench:idle';
        const tokens = kind === 'relay' ? await mintTokens(key, redis.url, [stream]) : [];
        const m = await measureMemory(server, fleet, scale, stream, tokens[0]);
        log(`  ${(m.bytesPerConnection / 1024).toFixed(1)} KB per idle connection`);
        return m;
      });
    }
    if (parts.has('storm') && !overBudget('storm')) {
      log(`${kind}: reconnect storm of ${scale.storm.clients} clients`);
      const streams = Array.from({ length: scale.storm.streams }, (_, s) => `bench:storm:${s}`);
      const tokens = kind === 'relay' ? await mintTokens(key, redis.url, streams) : [];
      let server: BenchServer = await startBenchServer(kind, ctx);
      const publisher = await createPublisher(kind, redis.url, server.port);
      try {
        const storm: { result: StormResult; server: BenchServer } = await measureStorm(
          server,
          ctx,
          fleet,
          publisher,
          scale,
          streams,
          tokens,
          log,
        );
        server = storm.server;
        out.storm = storm.result;
        const r = storm.result;
        log(
          `  99% back after ${r.recoveryMs ?? 'never'} ms (${(r.backShare * 100).toFixed(0)}% back at the end); ${r.missed} events missed, ${r.duplicates} duplicates (of ${r.published} published)`,
        );
      } finally {
        await publisher.close();
        await server.service.stop();
      }
    }
  } finally {
    await redis.stop();
  }
  return out;
}

async function withServer<T>(kind: ServerKind, ctx: BenchContext, redis: RedisServer, fn: (server: BenchServer) => Promise<T>): Promise<T> {
  // Each measurement gets a fresh process, and a clean Redis so no stream from before is read.
  await redis.client().flushall();
  const server = await startBenchServer(kind, ctx);
  try {
    return await fn(server);
  } finally {
    if (process.env.BENCH_DEBUG === '1') process.stderr.write(server.service.output());
    // SIGTERM first so that a profiled relay writes its CPU profile.
    await server.service.stop(10_000);
  }
}

function pinRedis(redis: RedisServer, pinning: Pinning): void {
  const pid = redis.service?.pid;
  if (pinning.pinned && pid !== undefined) pinProcess(pid, pinning.plan.clientCpus);
}

function redisPid(kind: ServerKind, redis: RedisServer): number | null {
  return kind === 'uws' ? null : (redis.service?.pid ?? null);
}

function socketioDefaults(line: string): Record<string, unknown> | null {
  try {
    const record = JSON.parse(line) as { defaults?: Record<string, unknown> };
    return {
      ...record.defaults,
      transports: ['websocket'],
      adapter:
        '@socket.io/redis-streams-adapter 0.3.1 defaults: streamName "socket.io", streamCount 1, maxLen 10000, readCount 100, blockTimeInMs 5000, heartbeatInterval 5000, onlyPlaintext false',
    };
  } catch (error) {
    log(`socket.io listening line unreadable: ${String(error)}`);
    return null;
  }
}

await main();
process.exit(0);
