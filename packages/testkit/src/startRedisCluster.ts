import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import type { ClusterOptions } from 'ioredis';
import { askRedisNodeText } from './askRedisNode.js';
import { clusterHealthProblem } from './clusterHealthProblem.js';
import type { ClusterNodeReport } from './clusterHealthProblem.js';
import { clusterKeySlot } from './clusterKeySlot.js';
import { pickKeysOnEveryPrimary } from './pickKeysOnEveryPrimary.js';
import { clusterSlotOwners } from './clusterSlotOwners.js';
import { assertRedisInstalled } from './launchRedisServer.js';
import { parseClusterNodes } from './parseClusterNodes.js';
import { RedisClusterNodeProcess } from './RedisClusterNodeProcess.js';
import type { RedisClusterNode } from './RedisClusterNodeProcess.js';
import { ServiceError, spawnService } from './spawnService.js';
import { waitFor } from './waitFor.js';
import { DeadlineError, withDeadline } from './withDeadline.js';

export type { RedisClusterNode, RedisClusterRole } from './RedisClusterNodeProcess.js';

export interface StartRedisClusterOptions {
  /** Default 3 (the fewest Redis Cluster accepts). */
  primaries?: number;
  /** Default 1, so that killing a primary fails over. */
  replicasPerPrimary?: number;
  /** Extra `redis-server` args for every node, e.g. `['--notify-keyspace-events', 'Kt']`. */
  args?: readonly string[];
  /** `cluster-node-timeout`; default 1 000 ms, so a killed primary is failed over in about 2 s. */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage`. Default false (`no`, as deploy/README recommends): the
   * primaries that are up keep serving their slots while another's fail over. `true` is Redis's
   * own default, under which every node refuses every key (CLUSTERDOWN) until the failover ends.
   */
  requireFullCoverage?: boolean;
  /** Deadline for the whole cluster to be up and healthy; default 20 000 ms. */
  startTimeoutMs?: number;
  /** Copy every node's log to stderr; see SpawnServiceOptions.echo. */
  echo?: boolean;
  /** Default `redis-server` from PATH; `redis-cli` is expected beside it on PATH. */
  binary?: string;
}

export interface RedisCluster extends AsyncDisposable {
  /** Every node, in start order; their ports and ids stay fixed across kill() and restart(). */
  readonly nodes: readonly RedisClusterNode[];
  /** The port of a node that was a primary at start. */
  readonly seedPort: number;
  /** `redis-cluster://127.0.0.1:<seedPort>`: how tokens and app config name a cluster. */
  readonly url: string;
  /** An ioredis Cluster client seeded with every node (so it connects even with the seed down); closed by stop(). */
  cluster(options?: ClusterOptions): Cluster;
  /** The live node serving this key's slot as primary now; rejects while no live node does (mid-failover). */
  primaryOf(key: string): Promise<RedisClusterNode>;
  /** The live nodes that serve at least one slot as primary now. */
  primaries(): Promise<RedisClusterNode[]>;
  /**
   * Resolves once every live node reports cluster_state:ok, knows every live node and flags none
   * as failing, all agree on a live primary for every slot, and every live replica's link is up.
   * Rejects at the deadline (default 30 000 ms) naming the last problem seen.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /**
   * `count` key names `<prefix>0`, `<prefix>1`, … (not consecutive) spread round-robin over the
   * current primaries, so every primary owns at least one: for tests that want a stream on every
   * node. Rejects if `count` is below the number of primaries or a slot has no live primary.
   * Same as clusterKeysOnEveryPrimary(cluster, prefix, count).
   */
  keysOnEveryPrimary(prefix: string, count: number): Promise<string[]>;
  /** Closes every client, stops every node, removes their directories. Idempotent. */
  stop(): Promise<void>;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function createCluster(nodes: readonly RedisClusterNodeProcess[], replicas: number, timeoutMs: number, echo?: boolean) {
  const cli = await spawnService({
    name: 'redis-cli --cluster create',
    command: 'redis-cli',
    args: [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ],
    ...(echo === undefined ? {} : { echo }),
  });
  let status;
  try {
    status = await withDeadline(cli.exited, timeoutMs, 'redis-cli --cluster create finishes');
  } catch (error) {
    await cli.stop(1_000);
    throw new ServiceError(cli.name, describe(error), cli.output(), { cause: error });
  }
  if (status.code !== 0 || /\[ERR\]/.test(cli.output()))
    throw new ServiceError(cli.name, `failed (exit ${String(status.code)})`, cli.output());
}

/**
 * Starts a private Redis Cluster on free ports of 127.0.0.1 (default 3 primaries with 1 replica
 * each), without persistence, and resolves once it is healthy. Use with
 * `await using cluster = await startRedisCluster()` or call stop() in afterAll.
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const primaryCount = options.primaries ?? 3;
  const replicas = options.replicasPerPrimary ?? 1;
  const startTimeoutMs = options.startTimeoutMs ?? 20_000;
  const deadline = Date.now() + startTimeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const binary = options.binary ?? 'redis-server';
  assertRedisInstalled(binary);
  assertRedisInstalled('redis-cli');
  const root = await mkdtemp(join(tmpdir(), 'streamgate-redis-cluster-'));
  const settings = {
    binary,
    nodeTimeoutMs: options.nodeTimeoutMs ?? 1_000,
    requireFullCoverage: options.requireFullCoverage ?? false,
    launch: {
      startTimeoutMs,
      ...(options.args ? { args: options.args } : {}),
      ...(options.echo === undefined ? {} : { echo: options.echo }),
    },
  };
  const taken = new Set<number>();
  const started: RedisClusterNodeProcess[] = [];
  const clients = new Set<Cluster>();
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const client of clients) client.disconnect();
    clients.clear();
    await Promise.all(started.map((node) => node.stop()));
    await rm(root, { recursive: true, force: true });
  };

  const reportOf = async (node: RedisClusterNodeProcess): Promise<ClusterNodeReport> => {
    const [clusterInfo, nodesText, replicationInfo] = await Promise.all([
      askRedisNodeText(node.port, 'CLUSTER', ['INFO']),
      askRedisNodeText(node.port, 'CLUSTER', ['NODES']),
      askRedisNodeText(node.port, 'INFO', ['replication']),
    ]);
    return { port: node.port, id: node.id, clusterInfo, view: parseClusterNodes(nodesText), replicationInfo };
  };
  const live = () => started.filter((node) => node.running);
  const liveIds = () => new Set(live().map((node) => node.id));
  const byId = (id: string) => started.find((node) => node.id === id);

  /** Slot owners from every live node's view; a node that does not answer is left out. */
  const askSlotOwners = async () => {
    const nodes = live();
    const views = await Promise.allSettled(
      nodes.map(async (node) => parseClusterNodes(await askRedisNodeText(node.port, 'CLUSTER', ['NODES']))),
    );
    const answered = views.flatMap((view) => (view.status === 'fulfilled' ? [view.value] : []));
    if (answered.length === 0) {
      const why = views.map((view, i) => `:${nodes[i]?.port} ${view.status === 'rejected' ? describe(view.reason) : 'answered'}`);
      throw new Error(`redis cluster: no live node answers CLUSTER NODES (${why.join('; ')})`);
    }
    return clusterSlotOwners(answered, liveIds());
  };
  // Calls made while one is in flight share its answer: a test that looks up the owners of 60
  // keys at once (Promise.all over primaryOf) would otherwise open 60 connections to every node
  // at once, 360 for six nodes, and on a loaded 2-core machine none answered within its 2 s.
  let inFlight: ReturnType<typeof askSlotOwners> | undefined;
  const slotOwners = () => {
    inFlight ??= askSlotOwners().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const waitHealthy = async (timeoutMs = 30_000) => {
    let problem = 'not checked yet';
    try {
      await waitFor(
        async () => {
          const nodes = live();
          const reports = await Promise.allSettled(nodes.map(reportOf));
          const failed = reports.findIndex((report) => report.status === 'rejected');
          const rejected = reports[failed];
          if (rejected?.status === 'rejected') problem = `node :${nodes[failed]?.port} does not answer: ${describe(rejected.reason)}`;
          else
            problem =
              clusterHealthProblem(
                reports.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
                liveIds(),
              ) ?? '';
          return problem === '';
        },
        { timeoutMs, intervalMs: 100, message: 'redis cluster healthy' },
      );
    } catch (error) {
      if (!(error instanceof DeadlineError)) throw error;
      throw new DeadlineError(`redis cluster not healthy: ${problem}`, timeoutMs, { cause: error });
    }
  };

  const primaryOf = async (key: string) => {
    const slot = clusterKeySlot(key);
    const id = (await slotOwners())[slot];
    const node = id === undefined ? undefined : byId(id);
    if (!node) throw new Error(`redis cluster: no live primary serves slot ${slot} (key ${JSON.stringify(key)}) yet`);
    return node;
  };

  const primaries = async () => {
    const ids = new Set((await slotOwners()).filter((id) => id !== undefined));
    return started.filter((node) => ids.has(node.id));
  };

  try {
    const total = primaryCount * (1 + replicas);
    const launches = await Promise.allSettled(
      Array.from({ length: total }, (_, index) => RedisClusterNodeProcess.start(join(root, `node-${index}`), settings, taken)),
    );
    // Every node that did start joins `started`, so that the stop() below reaches it too.
    for (const launch of launches) if (launch.status === 'fulfilled') started.push(launch.value);
    const failure = launches.find((launch) => launch.status === 'rejected');
    if (failure) throw failure.reason;
    await createCluster(started, replicas, remaining(), options.echo);
    await waitHealthy(remaining());
    const owners = await slotOwners();
    for (const node of started) node.setStartRole(owners.includes(node.id) ? 'primary' : 'replica');
  } catch (error) {
    await stop();
    throw error;
  }

  const seedPort = started.find((node) => node.role === 'primary')?.port;
  if (seedPort === undefined) {
    await stop();
    throw new Error('redis cluster: healthy, yet no node serves a slot');
  }
  const cluster: RedisCluster = {
    nodes: started,
    seedPort,
    url: `redis-cluster://127.0.0.1:${seedPort}`,
    cluster(clusterOptions?: ClusterOptions) {
      if (stopped) throw new Error('redis cluster was stopped');
      const client = new Cluster(
        started.map((node) => ({ host: '127.0.0.1', port: node.port })),
        { ...clusterOptions },
      );
      clients.add(client);
      client.once('end', () => clients.delete(client));
      return client;
    },
    primaryOf,
    primaries,
    waitHealthy,
    async keysOnEveryPrimary(prefix: string, count: number) {
      return pickKeysOnEveryPrimary(await slotOwners(), prefix, count);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
  return cluster;
}
