import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readListeningPort, repoRoot, spawnTsEntry } from '@streamgate/testkit';
import type { Service } from '@streamgate/testkit';
import type { ServerKind } from './loadgen/protocols.js';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';

export interface BenchContext {
  readonly redisUrl: string;
  readonly jwksFile: string;
  readonly audience: string;
  readonly issuer: string;
  /** Write a V8 CPU profile of the relay into this directory. */
  readonly profileDir: string | undefined;
  /** Where the server under test runs: every server started is pinned to its core when pinned. */
  readonly pinning: Pinning;
  /** Laid over every server's environment, under startBenchServer's `extraEnv` (the relay's read mode). */
  readonly serverEnv?: Readonly<Record<string, string>>;
}

export interface BenchServer {
  readonly kind: ServerKind;
  readonly port: number;
  readonly pid: number;
  /** The server's `listening` line (Socket.IO reports its effective defaults in it). */
  readonly listeningLine: string;
  readonly service: Service;
}

const ENTRIES: Record<Exclude<ServerKind, 'relay'>, string> = {
  socketio: 'test/bench/servers/socketioServer.ts',
  wsrelay: 'test/bench/servers/wsRelayServer.ts',
  uws: 'test/bench/servers/uwsCeilingServer.ts',
  uwsfloor: 'test/bench/servers/uwsCeilingServer.ts',
};

/** The environment of a peer: the floor is the ceiling's server reading the live channels. */
function peerEnv(kind: Exclude<ServerKind, 'relay'>, redisUrl: string, port: number): Record<string, string> {
  const env = { BENCH_REDIS_URL: redisUrl, BENCH_PORT: String(port), NODE_ENV: 'production' };
  return kind === 'uwsfloor' ? { ...env, BENCH_UWS_FEED: 'redis' } : env;
}

/**
 * Starts one server under test in a fresh process; `port` 0 lets the kernel choose. `extraEnv`
 * is laid over the server's environment (the relay's read mode).
 */
export async function startBenchServer(
  kind: ServerKind,
  ctx: BenchContext,
  port = 0,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<BenchServer> {
  const gcPreload = pathToFileURL(join(repoRoot(), 'test/bench/servers/gcOnSignal.ts')).href;
  const nodeArgs = ['--expose-gc', '--import', gcPreload];
  if (kind === 'relay' && ctx.profileDir !== undefined) {
    mkdirSync(ctx.profileDir, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${ctx.profileDir}`);
  }
  const entry = kind === 'relay' ? 'apps/relay/src/main.ts' : ENTRIES[kind];
  const env: Record<string, string> =
    kind === 'relay'
      ? {
          RELAY_HOST: '127.0.0.1',
          RELAY_PORT: String(port),
          RELAY_NODE_ID: 'bench-relay',
          RELAY_JWKS_FILE: ctx.jwksFile,
          RELAY_TOKEN_AUDIENCE: ctx.audience,
          RELAY_TOKEN_ISSUER: ctx.issuer,
          RELAY_REDIS_ALLOWLIST: ctx.redisUrl,
          // The peers have no admission control: lift the relay's so the same load reaches all
          // four (its per-second limit would turn a 10k-client burst into refusals by design).
          RELAY_MAX_CONNECTIONS: '1000000',
          RELAY_MAX_CONNECTIONS_PER_SECOND: '1000000',
          // Stopping a server between workloads must not wait out a production drain window.
          RELAY_DRAIN_WINDOW_MS: '1000',
          // Liveness is a cost per socket, not per entry, and Socket.IO's stays out of every step:
          // engine.io arms each socket's first ping one interval (25 s) after its connect, later
          // than any step after a subscribe burst ends, while the relay spreads its first pings
          // over the interval from each welcome. Both pings are kept out of the steps (no relay
          // ping, no uWS auto-ping, within a run); idleCost.ts measures both at their defaults.
          RELAY_PING_INTERVAL_MS: '600000',
          RELAY_IDLE_TIMEOUT_SECONDS: '960',
          LOG_LEVEL: 'info',
          NODE_ENV: 'production',
        }
      : peerEnv(kind, ctx.redisUrl, port);
  const service = await spawnTsEntry(entry, {
    name: `bench-${kind}`,
    env: { ...env, ...ctx.serverEnv, ...extraEnv },
    nodeArgs,
    // On another Node (scripts/debianUserland.mjs run --node 24), the servers that load uWS
    // run in its userland; the others on that Node on this host.
    relayUserland: kind === 'relay' || kind === 'uws' || kind === 'uwsfloor',
    readyPattern: /"msg":"listening"/,
    readyTimeoutMs: 30_000,
  });
  const listeningLine = await service.waitForLine(/"msg":"listening"/);
  // Pinned once listening: what the server does at boot (imports, JIT) is not measured.
  if (ctx.pinning.pinned) pinProcess(service.pid, ctx.pinning.plan.serverCpus);
  return { kind, port: await readListeningPort(service), pid: service.pid, listeningLine, service };
}
