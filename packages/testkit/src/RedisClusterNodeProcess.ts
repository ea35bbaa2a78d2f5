import { mkdir, rm } from 'node:fs/promises';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { askRedisNode } from './askRedisNode.js';
import { freePort } from './freePort.js';
import {
  REDIS_BIND_ATTEMPTS,
  isRedisBindFailure,
  isReservedRedisPort,
  launchRedisServer,
  relaunchRedisServer,
} from './launchRedisServer.js';
import type { LaunchRedisOptions } from './launchRedisServer.js';
import type { ExitStatus, Service } from './spawnService.js';

export type RedisClusterRole = 'primary' | 'replica';

export interface RedisClusterNode {
  readonly port: number;
  /** The cluster bus port (`--cluster-port`), chosen free rather than port + 10 000, which may not exist. */
  readonly busPort: number;
  /** CLUSTER MYID; kept across restart() by the node's nodes.conf. */
  readonly id: string;
  /** Its role once the cluster was first healthy; see currentRole() after a failover. */
  readonly role: RedisClusterRole;
  /** `redis://127.0.0.1:<port>/0`: a plain (non-cluster) connection to this node. */
  readonly url: string;
  readonly running: boolean;
  /** The server process (its pid), undefined between kill() and restart(). */
  readonly service: Service | undefined;
  /** A plain ioredis connection to this node; closed by the cluster's stop(). */
  client(options?: RedisOptions): Redis;
  /** What the node says it is now (ROLE). */
  currentRole(): Promise<RedisClusterRole>;
  /** Kills the node (default SIGKILL: a crash, not a shutdown); its connections stay open and retry. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus | undefined>;
  /**
   * Stops the node if running and starts it again on the same ports and directory, so its
   * nodes.conf makes it rejoin under the same id (as a replica, if it was failed over meanwhile:
   * its data is empty, since nodes do not persist). Resolves once it answers PING; call the
   * cluster's waitHealthy() to wait until it has rejoined. A primary restarted before its replica
   * took over comes back as the (empty) primary of its slots, and the replica resyncs to empty:
   * wait for primaryOf() to change first when the test wants a failover.
   */
  restart(): Promise<void>;
}

/** How a node is started; one cluster passes the same to every node. */
export interface ClusterNodeSettings {
  readonly binary: string;
  readonly nodeTimeoutMs: number;
  /** `cluster-require-full-coverage`; false (`no`) unless a test wants Redis's own default. */
  readonly requireFullCoverage: boolean;
  readonly launch: LaunchRedisOptions;
}

async function pickPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (isReservedRedisPort(port) || taken.has(port)) continue;
    taken.add(port);
    return port;
  }
}

/** One `redis-server --cluster-enabled yes` process of a test cluster, in its own directory. */
export class RedisClusterNodeProcess implements RedisClusterNode {
  readonly url: string;
  private startRole: RedisClusterRole | undefined;
  private readonly clients = new Set<Redis>();
  private stopped = false;

  private constructor(
    readonly port: number,
    readonly busPort: number,
    readonly id: string,
    private readonly dir: string,
    private readonly settings: ClusterNodeSettings,
    private current: Service | undefined,
  ) {
    this.url = `redis://127.0.0.1:${port}/0`;
  }

  /** Starts a node in `dir` on free ports not in `taken` (which it extends), retrying if one is grabbed first. */
  static async start(dir: string, settings: ClusterNodeSettings, taken: Set<number>): Promise<RedisClusterNodeProcess> {
    for (let attempt = 1; ; attempt += 1) {
      // A failed attempt may have left a nodes.conf naming the old ports; start from nothing.
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const port = await pickPort(taken);
      const busPort = await pickPort(taken);
      let service: Service;
      try {
        service = await launchRedisServer(settings.binary, port, dir, RedisClusterNodeProcess.launchOptions(settings, busPort));
      } catch (error) {
        // freePort() only says the port was free a moment ago; another process may have taken it.
        if (!isRedisBindFailure(error) || attempt >= REDIS_BIND_ATTEMPTS) throw error;
        continue;
      }
      try {
        const id = await askRedisNode(port, 'CLUSTER', ['MYID']);
        if (typeof id !== 'string') throw new Error(`redis-server on ${port}: CLUSTER MYID answered ${typeof id}`);
        return new RedisClusterNodeProcess(port, busPort, id, dir, settings, service);
      } catch (error) {
        await service.stop();
        throw error;
      }
    }
  }

  private static launchOptions(settings: ClusterNodeSettings, busPort: number): LaunchRedisOptions {
    const args = [
      ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
      ...['--cluster-node-timeout', String(settings.nodeTimeoutMs), '--cluster-port', String(busPort)],
      // A replica whose link went quiet for a while still fails over: tests kill primaries at any
      // moment and want a promotion, not a cluster that stays down.
      ...['--cluster-replica-validity-factor', '0'],
      // A primary otherwise waits 5 s for more replicas before a diskless full sync: that delay
      // would dominate cluster start and every rejoin.
      ...['--repl-diskless-sync-delay', '0'],
      // What deploy/README recommends for relays: while one primary's slots fail over, the other
      // primaries go on serving theirs (with `yes` every node refuses every key meanwhile).
      ...['--cluster-require-full-coverage', settings.requireFullCoverage ? 'yes' : 'no'],
      ...(settings.launch.args ?? []),
    ];
    return { ...settings.launch, args };
  }

  get role(): RedisClusterRole {
    if (this.startRole === undefined) throw new Error(`redis cluster node :${this.port} has no role until the cluster is up`);
    return this.startRole;
  }

  /** Records the role seen once the cluster was first healthy. */
  setStartRole(role: RedisClusterRole): void {
    this.startRole = role;
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  get service(): Service | undefined {
    return this.current;
  }

  client(options?: RedisOptions): Redis {
    if (this.stopped) throw new Error(`redis cluster node :${this.port} was stopped`);
    const client = new Redis(this.url, { ...options });
    this.clients.add(client);
    client.once('end', () => this.clients.delete(client));
    return client;
  }

  async currentRole(): Promise<RedisClusterRole> {
    const reply = await askRedisNode(this.port, 'ROLE');
    const role: unknown = Array.isArray(reply) ? (reply as unknown[])[0] : undefined;
    if (role === 'master') return 'primary';
    if (role === 'slave') return 'replica';
    throw new Error(`redis cluster node :${this.port}: ROLE answered ${JSON.stringify(reply)}`);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<ExitStatus | undefined> {
    const service = this.current;
    this.current = undefined;
    if (!service) return undefined;
    service.signal(signal);
    return service.exited;
  }

  async restart(): Promise<void> {
    if (this.stopped) throw new Error(`redis cluster node :${this.port} was stopped`);
    const previous = this.current;
    this.current = undefined;
    await previous?.stop();
    const service = await relaunchRedisServer(
      this.settings.binary,
      this.port,
      this.dir,
      RedisClusterNodeProcess.launchOptions(this.settings, this.busPort),
    );
    this.current = service;
    const id = await askRedisNode(this.port, 'CLUSTER', ['MYID']);
    // A new id means nodes.conf was lost: the node would be a stranger, not the one that rejoins.
    if (id !== this.id) throw new Error(`redis cluster node :${this.port} restarted as ${String(id)}, not ${this.id}`);
  }

  /** Closes this node's clients and stops its process; the cluster removes the directory. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const client of this.clients) client.disconnect();
    this.clients.clear();
    const service = this.current;
    this.current = undefined;
    await service?.stop();
  }
}
