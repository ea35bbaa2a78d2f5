import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { generateSigningKey } from '@streamgate/server';
import { startRedis } from '@streamgate/testkit';
import { startBenchServer } from './BenchServer.js';
import { LoadFleet } from './LoadFleet.js';
import { BENCH_AUDIENCE, BENCH_ISSUER, mintBenchTokens } from './mintBenchTokens.js';
import { detectPinning, pinProcess } from './pinning.js';
import { commandCostPerEntry, parseCommandStats } from './commandStats.js';
import { CpuMeter } from './procStats.js';
import { seedStreams } from './seedStreams.js';
import { serverSetup } from './taskWorkloads.js';

// What a server spends per second on sockets that receive nothing: its periodic per-socket work
// (send-buffer checks, liveness), which at a low delivery rate weighs on every delivery.
// `node --conditions=streamgate-source --import tsx test/bench/idleCost.ts`, with
// IDLE_SOCKETS (10000), IDLE_STREAMS (sockets: one stream each; more are spread over the sockets), IDLE_SECONDS (25), IDLE_SERVER (relay),
// IDLE_SETTLE_SECONDS (30), IDLE_PROFILE_DIR. Each server pings at its default interval, 25 s
// for both: engine.io arms a socket's first ping one interval after its connect, so the settle
// outlasts an interval and the window (IDLE_SECONDS, 25) is a whole one, or Socket.IO's pings
// would fall outside it and only the relay's, spread from each welcome, would be counted.

const env = z
  .object({
    IDLE_SOCKETS: z.coerce.number().int().positive().default(10_000),
    IDLE_STREAMS: z.coerce.number().int().positive().optional(),
    IDLE_SECONDS: z.coerce.number().positive().default(25),
    IDLE_SETTLE_SECONDS: z.coerce.number().nonnegative().default(30),
    IDLE_SERVER: z.enum(['relay', 'uws', 'socketio', 'wsrelay']).default('relay'),
    /** Write a CPU profile of the relay into this directory. */
    IDLE_PROFILE_DIR: z.string().optional(),
  })
  .parse(process.env);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const key = await generateSigningKey('ES256', 'bench-key');
  const { d: _private, ...publicJwk } = key;
  const jwksFile = join(mkdtempSync(join(tmpdir(), 'streamgate-idle-')), 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwk] }));
  const pinning = detectPinning('auto');
  if (pinning.pinned) pinProcess(process.pid, pinning.plan.clientCpus);
  // Each server as the other parts run it: the relay in notify mode, on a Redis that notifies.
  const setup = serverSetup(env.IDLE_SERVER);
  const redis = await startRedis({ args: setup.redisArgs });
  const fleet = LoadFleet.start(1);
  if (pinning.pinned) for (const pid of fleet.pids) pinProcess(pid, pinning.plan.clientCpus);
  const ctx = { jwksFile, audience: BENCH_AUDIENCE, issuer: BENCH_ISSUER, profileDir: env.IDLE_PROFILE_DIR, pinning, redisUrl: redis.url };
  // startBenchServer keeps the relay's pings out of a step; here they are what is measured.
  const liveness = { RELAY_PING_INTERVAL_MS: '25000', RELAY_IDLE_TIMEOUT_SECONDS: '60' };
  const server = await startBenchServer(env.IDLE_SERVER, ctx, 0, { ...setup.env, ...liveness });
  try {
    const streamCount = env.IDLE_STREAMS ?? env.IDLE_SOCKETS;
    const streams = Array.from({ length: streamCount }, (_, s) => `idle:${s}`);
    // The streams exist, as in the fan-out workloads (which publish to them).
    const seeder = redis.client();
    await seedStreams(seeder, streams);
    seeder.disconnect();
    const tokens = env.IDLE_SERVER === 'relay' ? await mintBenchTokens(key, redis.url, streams) : [];
    const opened = await fleet.open({
      kind: env.IDLE_SERVER,
      port: server.port,
      streams,
      tokens,
      // Every stream is watched: with more streams than sockets, each socket holds several (the task workloads' shape).
      clients: Array.from({ length: env.IDLE_SOCKETS }, (_, c) =>
        Array.from(
          { length: Math.max(1, Math.ceil((streamCount - c) / env.IDLE_SOCKETS)) },
          (_j, j) => (c + j * env.IDLE_SOCKETS) % streamCount,
        ),
      ),
      trackSeq: false,
      reconnect: false,
      timeoutMs: 120_000,
    });
    // The subscribe burst's own work (JIT, GC) settles first, and every socket's ping timer runs.
    await sleep(env.IDLE_SETTLE_SECONDS * 1000);
    const stats = redis.client();
    const statsBefore = parseCommandStats(await stats.info('commandstats'));
    const meter = new CpuMeter([server.pid, ...(redis.service?.pid === undefined ? [] : [redis.service.pid])]);
    await sleep(env.IDLE_SECONDS * 1000);
    const { cores, wallSeconds } = meter.stop();
    const perSecond = commandCostPerEntry(statsBefore, parseCommandStats(await stats.info('commandstats')), wallSeconds);
    stats.disconnect();
    const serverMs = (cores[0] ?? 0) * 1000;
    process.stdout.write(
      `${env.IDLE_SERVER}: ${opened.ready} idle sockets on ${streamCount} streams, ${wallSeconds.toFixed(1)} s: ` +
        `server ${serverMs.toFixed(1)} ms/s (${((serverMs * 1000) / Math.max(1, opened.ready)).toFixed(2)} µs per socket per second), ` +
        `redis ${((cores[1] ?? 0) * 1000).toFixed(1)} ms/s\n` +
        `  redis commands per second: ${perSecond.map((c) => `${c.command} ${c.callsPerEntry.toFixed(1)}`).join(', ')}\n`,
    );
  } finally {
    await fleet.closeAll();
    fleet.stop();
    await server.service.stop();
    await redis.stop();
  }
}

await main();
