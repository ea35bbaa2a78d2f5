/**
 * What a relay's operations snapshots cost at 10,000 connections, as a share of one core.
 *
 *   node --conditions=streamgate-source --import tsx test/bench/opsSnapshotCost.ts
 *
 * Two real relays run side by side from the same build, each holding the same number of idle
 * connections (raw ws clients in separate load processes, each subscribed to one quiet stream):
 * one publishes snapshots (RELAY_OPS_REDIS_URL set), the other does not. Their CPU is read from
 * /proc/<pid>/stat over the same windows, so machine noise lands on both; the cost is the
 * difference. Then the collect + validate + serialize + XADD cycle itself is timed in this
 * process, which is the figure without the noise of a shared machine.
 *
 * Env: OPS_COST_CONNECTIONS (10000), OPS_COST_WINDOW_S (20), OPS_COST_ROUNDS (3).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SignJWT, importJWK } from 'jose';
import { OPS_STREAM_MAXLEN, OpsSnapshotPublisher, relaySnapshotSchema } from '@streamgate/ops';
import { generateSigningKey } from '@streamgate/server';
import { startRedis, waitFor } from '@streamgate/testkit';
import { RelaySnapshotCollector } from '../../apps/relay/src/ops/RelaySnapshotCollector.js';
import { startBenchServer } from './BenchServer.js';
import type { BenchServer } from './BenchServer.js';
import { LoadFleet } from './LoadFleet.js';
import { CpuMeter } from './procStats.js';

const AUDIENCE = 'streamgate-bench';
const ISSUER = 'streamgate-bench';
const OPS_STREAM = 'bench:ops';
const QUIET_STREAM = 'bench:ops-cost:quiet';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}=${raw ?? ''}: must be a positive number`);
  return value;
}

const log = (line: string): void => void process.stderr.write(`[ops-cost] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function metric(server: BenchServer, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function main(): Promise<void> {
  const connections = envNumber('OPS_COST_CONNECTIONS', 10_000);
  const windowS = envNumber('OPS_COST_WINDOW_S', 20);
  const rounds = envNumber('OPS_COST_ROUNDS', 3);
  log(`${cpus().length} cores, load average ${(loadavg()[0] ?? 0).toFixed(2)}; ${connections} connections per relay`);

  const redis = await startRedis();
  const key = await generateSigningKey('ES256', 'bench-key');
  const { d: _private, ...publicJwk } = key;
  const jwksFile = join(mkdtempSync(join(tmpdir(), 'streamgate-ops-cost-')), 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwk] }));
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ ver: 1, stream: QUIET_STREAM, redis: redis.url })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('bench')
    .setIssuedAt(now)
    .setExpirationTime(now + 3_600)
    .setJti('ops-cost')
    .sign(await importJWK(key, key.alg));

  const ctx = {
    redisUrl: redis.url,
    jwksFile,
    audience: AUDIENCE,
    issuer: ISSUER,
    profileDir: undefined,
    pinning: { pinned: false, reason: 'both relays measured side by side' } as const,
  };
  const on = await startBenchServer('relay', ctx, 0, {
    RELAY_NODE_ID: 'ops-on',
    RELAY_OPS_REDIS_URL: redis.url,
    RELAY_OPS_STREAM: OPS_STREAM,
  });
  const off = await startBenchServer('relay', ctx, 0, { RELAY_NODE_ID: 'ops-off' });
  const fleet = LoadFleet.start(2);
  try {
    for (const server of [on, off]) {
      const opened = await fleet.open({
        kind: 'relay',
        port: server.port,
        streams: [QUIET_STREAM],
        tokens: [token],
        clients: Array.from({ length: connections }, () => [0]),
        trackSeq: false,
        reconnect: false,
        timeoutMs: 120_000,
      });
      log(`${server.listeningLine.includes('ops-on') ? 'ops-on' : 'ops-off'}: ${opened.ready} subscribed, ${opened.failed} failed`);
      if (opened.failed > 0) throw new Error(`${opened.failed} clients failed to subscribe`);
    }
    const reader = redis.client();
    // The publishing relay's own snapshot must show the connections: the measured one is the real thing.
    const seen = await waitFor(
      async () => {
        const [entry] = await reader.xrevrange(OPS_STREAM, '+', '-', 'COUNT', 1);
        const snapshot = entry === undefined ? null : relaySnapshotSchema.parse(JSON.parse(entry[1][1] ?? ''));
        return snapshot !== null && snapshot.connections === connections && snapshot;
      },
      { timeoutMs: 30_000, message: `no snapshot with ${connections} connections` },
    );
    const bytes = Buffer.byteLength(JSON.stringify(seen));
    log(`ops-on snapshot: connections ${seen.connections}, subscriptions ${seen.subscriptions}, ${bytes} bytes`);
    for (const server of [on, off])
      log(`${server === on ? 'ops-on' : 'ops-off'} connections metric: ${await metric(server, 'streamgate_relay_connections')}`);

    await sleep(5_000); // settle after the connection burst (JIT, GC of the handshakes)
    const before = await reader.xlen(OPS_STREAM);
    const diffs: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const meter = new CpuMeter([on.pid, off.pid]);
      await sleep(windowS * 1_000);
      const { cores, wallSeconds } = meter.stop();
      const [onCores = 0, offCores = 0] = cores;
      diffs.push(onCores - offCores);
      log(
        `round ${round}: ${wallSeconds.toFixed(1)} s, ops-on ${(onCores * 100).toFixed(2)} % of a core, ops-off ${(offCores * 100).toFixed(2)} %, difference ${((onCores - offCores) * 100).toFixed(2)} points`,
      );
    }
    const published = (await reader.xlen(OPS_STREAM)) - before;
    const meanDiff = diffs.reduce((s, d) => s + d, 0) / diffs.length;

    // The cycle alone: the relay's collector over a state shaped like the measured pod, the
    // contract's publisher (validate, serialize, size check) and a real XADD, sequentially.
    const collector = new RelaySnapshotCollector({
      pod: 'ops-on',
      startedAt: Date.now() - 60_000,
      ready: () => true,
      connections: () => seen.connections,
      subscriptions: () => seen.subscriptions,
      streamsWatched: () => seen.streamsWatched,
      deliveriesTotal: () => seen.deliveriesTotal,
      refusals: () => Object.entries(seen.refusals),
      readModes: () => seen.readModes.map((m) => ({ target: `redis://${m.target}`, mode: m.mode })),
      drain: () => null,
      drainOutcome: () => null,
    });
    const sink = redis.client();
    const publisher = new OpsSnapshotPublisher({
      collect: (seq) => collector.collect(seq),
      sink: async (json) => void (await sink.xadd(OPS_STREAM, 'MAXLEN', '~', String(OPS_STREAM_MAXLEN), '*', 'data', json)),
      onFailure: (failure) => {
        throw new Error(`publish failed: ${failure.code}`);
      },
    });
    const cycles = 2_000;
    for (let i = 0; i < 200; i++) await publisher.publishOnce();
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    for (let i = 0; i < cycles; i++) await publisher.publishOnce();
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - wall0;
    const cpuMsPerCycle = (cpu.user + cpu.system) / 1000 / cycles;

    const summary = {
      connections,
      windowS,
      rounds,
      snapshotsPublishedDuringWindows: published,
      snapshotBytes: bytes,
      relayCpuDifferencePercentOfCore: diffs.map((d) => Number((d * 100).toFixed(3))),
      relayCpuDifferenceMeanPercentOfCore: Number((meanDiff * 100).toFixed(3)),
      cycleCpuMs: Number(cpuMsPerCycle.toFixed(4)),
      cycleWallMs: Number((wallMs / cycles).toFixed(4)),
      // One cycle a second: its CPU time per second as a share of a core.
      cyclePercentOfCore: Number(((cpuMsPerCycle / 1_000) * 100).toFixed(4)),
      loadAverageAtEnd: loadavg()[0] ?? 0,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    fleet.stop();
    await Promise.allSettled([on.service.stop(10_000), off.service.stop(10_000)]);
    await redis.stop();
  }
}

await main();
