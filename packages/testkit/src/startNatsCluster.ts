import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { freePort } from './freePort.js';
import { ServiceError, spawnService } from './spawnService.js';
import type { Service } from './spawnService.js';
import { waitFor } from './waitFor.js';

export interface StartNatsClusterOptions {
  /** Nodes in the cluster; default 3 (what an R3 stream needs). */
  size?: number;
  /** Deadline for the cluster to elect a JetStream meta leader, per attempt. Default 20 000 ms. */
  startTimeoutMs?: number;
  /** Default `nats-server` from PATH. */
  binary?: string;
  /** Copy the servers' logs to stderr; see SpawnServiceOptions.echo. */
  echo?: boolean;
  /**
   * Every node then refuses a client without this user (one user of the global account, which
   * keeps JetStream); connect() logs in with it. Routes between the nodes need no login.
   */
  auth?: NatsAuth;
}

/** A NATS login (`authorization { user, password }` on every node). */
export interface NatsAuth {
  readonly username: string;
  readonly password: string;
}

export interface NatsNode {
  /** `n1`, `n2`, …: the `server_name` JetStream reports as a leader. */
  readonly name: string;
  readonly port: number;
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  /** The running process, undefined between kill() and restart(). */
  readonly service: Service | undefined;
}

export interface NatsCluster extends AsyncDisposable {
  readonly nodes: readonly NatsNode[];
  /** Every node's URL, comma-separated: what a client given the cluster by its seeds connects to. */
  readonly servers: string;
  /** The login every node requires, when started with `auth`. */
  readonly auth: NatsAuth | undefined;
  /** The docs/protocol.md §17 target naming JetStream stream `stream` by every node as a seed (no credentials). */
  jetStreamTarget(stream: string): string;
  /** A connection to the cluster by all its seeds (reconnecting for ever, as `auth`'s user); closed by stop(). */
  connect(options?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /** Kills node `index` (default SIGKILL: a crash); its store stays for restart(). */
  kill(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP: the process holds its sockets and answers nothing, as a frozen VM would. */
  freeze(index: number): void;
  /** SIGCONT after freeze(). */
  thaw(index: number): void;
  /** Starts a killed node again on its ports, from its store. */
  restart(index: number): Promise<void>;
  /**
   * Rewrites every running node's config with the login `auth` and sends it SIGHUP, resolving
   * once each has logged the reload: the server then refuses a client logging in with the old
   * one and drops the connections that did. connect() logs in with `auth` from then on. Only for
   * a cluster started with `auth` (the reload cannot add or remove the requirement).
   */
  reload(auth: NatsAuth): Promise<void>;
  /** The index of the node leading a JetStream stream now. */
  streamLeader(stream: string): Promise<number>;
  /** Closes every connection, stops every node, removes the stores. Idempotent. */
  stop(): Promise<void>;
}

interface NodePorts {
  readonly client: number;
  readonly route: number;
}

const START_ATTEMPTS = 3;

export function assertNatsInstalled(binary: string): void {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined) {
    throw new Error(
      `${binary} --version failed (${probe.error.message}); the tests need a real NATS server binary: ` +
        'apt-get install nats-server (or run `node scripts/bootstrap.mjs`)',
      { cause: probe.error },
    );
  }
}

/** A string of the server's config language: quoted, so `$`, `#`, `:` and spaces stay literal. */
function configString(field: string, value: string): string {
  // Refused rather than escaped: the config parser's escapes are not JSON's, and a test login needs neither.
  if (value === '' || /["\\\p{Cc}]/u.test(value)) {
    throw new RangeError(`startNatsCluster auth.${field} must be non-empty, without quotes, backslashes or control characters`);
  }
  return `"${value}"`;
}

function authorizationBlock(auth: NatsAuth): string {
  return `authorization { user: ${configString('username', auth.username)}, password: ${configString('password', auth.password)} }`;
}

interface ClusterLayout {
  /** Unique per cluster: see nodeConfig. */
  readonly name: string;
  readonly ports: readonly NodePorts[];
}

function nodeConfig(name: string, ports: NodePorts, cluster: ClusterLayout, storeDir: string, auth: NatsAuth | undefined): string {
  const routes = cluster.ports.filter((p) => p !== ports).map((p) => `nats-route://127.0.0.1:${p.route}`);
  // Never the machine's own NATS: every port comes from freePort(). The cluster's name is its
  // own, not shared by the clusters of other test files: freePort() only says a port was free a
  // moment ago, so a route may reach a node of a cluster started beside it, and with one name
  // the two would merge (same node names, a meta layer that can no longer place replicas).
  return [
    `server_name: ${name}`,
    `listen: 127.0.0.1:${ports.client}`,
    // Top-level authorization applies to clients only: the cluster block has its own, left open.
    ...(auth === undefined ? [] : [authorizationBlock(auth)]),
    `jetstream { store_dir: "${storeDir}", max_memory_store: 64MB, max_file_store: 1GB }`,
    `cluster { name: ${cluster.name}, listen: 127.0.0.1:${ports.route}, routes: [${routes.join(', ')}] }`,
    '',
  ].join('\n');
}

function isBindFailure(error: unknown): boolean {
  return error instanceof ServiceError && /address already in use/i.test(error.output);
}

/**
 * Starts a private `nats-server` cluster with JetStream (default three nodes, enough for R3
 * streams) on free ports of 127.0.0.1, each with its own store directory, and resolves once
 * JetStream answers through it (a meta leader is elected). For one test file: `await using
 * nats = await startNatsCluster()` or stop() in afterAll.
 */
export async function startNatsCluster(options: StartNatsClusterOptions = {}): Promise<NatsCluster> {
  const binary = options.binary ?? 'nats-server';
  assertNatsInstalled(binary);
  const size = options.size ?? 3;
  const startTimeoutMs = options.startTimeoutMs ?? 20_000;
  const auth = options.auth === undefined ? undefined : { username: options.auth.username, password: options.auth.password };
  // Checked before any process starts, so a bad login names its field instead of a config parse error.
  if (auth !== undefined) authorizationBlock(auth);
  for (let attempt = 1; ; attempt += 1) {
    const dir = await mkdtemp(join(tmpdir(), 'streamgate-nats-'));
    const ports: NodePorts[] = [];
    for (let i = 0; i < size; i += 1) ports.push({ client: await freePort(), route: await freePort() });
    const cluster = new RunningNatsCluster(binary, dir, ports, options.echo, auth);
    try {
      await cluster.startAll(startTimeoutMs);
      return cluster;
    } catch (error) {
      await cluster.stop();
      // freePort() only says a port was free a moment ago: another process may have taken it.
      if (!isBindFailure(error) || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

class RunningNatsCluster implements NatsCluster {
  private readonly services: Array<Service | undefined>;
  private readonly connections = new Set<NatsConnection>();
  private stopped = false;
  readonly servers: string;

  constructor(
    private readonly binary: string,
    private readonly dir: string,
    private readonly ports: readonly NodePorts[],
    private readonly echo: boolean | undefined,
    private login: NatsAuth | undefined,
  ) {
    this.services = ports.map(() => undefined);
    this.servers = ports.map((p) => `nats://127.0.0.1:${p.client}`).join(',');
  }

  get auth(): NatsAuth | undefined {
    return this.login;
  }

  get nodes(): readonly NatsNode[] {
    return this.ports.map((p, i) => ({
      name: `n${i + 1}`,
      port: p.client,
      url: `nats://127.0.0.1:${p.client}`,
      service: this.services[i],
    }));
  }

  jetStreamTarget(stream: string): string {
    return `nats://${this.ports.map((p) => `127.0.0.1:${p.client}`).join(',')}/${stream}`;
  }

  async startAll(timeoutMs: number): Promise<void> {
    await Promise.all(this.ports.map((_, i) => this.launch(i, timeoutMs)));
    const nc = await this.connect();
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2_000, checkAPI: false });
      // JetStream answers 503 until the cluster has elected a meta leader: waitFor counts that as not yet.
      await waitFor(() => jsm.getAccountInfo().then(() => true), {
        timeoutMs,
        message: `the ${this.ports.length}-node NATS cluster elects a JetStream meta leader`,
      });
      // A meta leader can answer before every peer has reported to it: a replicated stream created
      // then fails with "no suitable peers for placement". A probe stream with a replica on every
      // node is placed only once all of them have.
      const probe = `TESTKIT_PROBE_${process.pid}`;
      await waitFor(
        () =>
          jsm.streams
            .add({ name: probe, subjects: [`$testkit.probe.${process.pid}`], num_replicas: this.ports.length, storage: StorageType.Memory })
            .then(() => true),
        { timeoutMs, message: `every node of the ${this.ports.length}-node NATS cluster can hold a replica` },
      );
      await jsm.streams.delete(probe);
    } finally {
      await this.closeConnection(nc);
    }
  }

  /** The cluster's name (from its own scratch directory's, which mkdtemp made unique) and ports. */
  private get layout(): ClusterLayout {
    return { name: `streamgate-test-${basename(this.dir).replace(/[^A-Za-z0-9-]/g, '')}`, ports: this.ports };
  }

  private async launch(index: number, timeoutMs: number): Promise<void> {
    const name = `n${index + 1}`;
    const ports = this.ports[index];
    if (ports === undefined) throw new RangeError(`no NATS node ${index}`);
    const storeDir = join(this.dir, name);
    await mkdir(storeDir, { recursive: true });
    const configFile = this.configFile(index);
    await writeFile(configFile, nodeConfig(name, ports, this.layout, storeDir, this.login));
    const service = await spawnService({
      name: `nats-server:${name}:${ports.client}`,
      command: this.binary,
      args: ['--config', configFile],
      ...(this.echo === undefined ? {} : { echo: this.echo }),
    });
    this.services[index] = service;
    // nats-server logs on stderr, which readyPattern does not watch.
    await service.waitForLine(/Server is ready/, timeoutMs);
  }

  private configFile(index: number): string {
    return join(this.dir, `n${index + 1}.conf`);
  }

  async reload(auth: NatsAuth): Promise<void> {
    if (this.login === undefined) throw new Error('reload(auth) needs a cluster started with auth');
    const login = { username: auth.username, password: auth.password };
    authorizationBlock(login);
    this.login = login;
    await Promise.all(
      this.ports.map(async (ports, index) => {
        const service = this.services[index];
        if (service === undefined) return;
        const name = `n${index + 1}`;
        await writeFile(this.configFile(index), nodeConfig(name, ports, this.layout, join(this.dir, name), login));
        const from = service.lineCount;
        if (!service.signal('SIGHUP')) throw new Error(`NATS node ${name} is gone: it cannot reload`);
        await service.waitForLine(/Reloaded server configuration/, 10_000, { fromLine: from });
      }),
    );
  }

  async connect(options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    const nc = await connect({
      servers: this.ports.map((p) => `127.0.0.1:${p.client}`),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
      ...(this.login === undefined ? {} : { user: this.login.username, pass: this.login.password }),
      ...options,
    });
    this.connections.add(nc);
    void nc.closed().then(() => this.connections.delete(nc));
    return nc;
  }

  async kill(index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const service = this.services[index];
    if (service === undefined) return;
    this.services[index] = undefined;
    // A frozen process takes no signal but SIGKILL until it runs again.
    service.signal('SIGCONT');
    service.signal(signal);
    await service.exited;
  }

  freeze(index: number): void {
    this.services[index]?.signal('SIGSTOP');
  }

  thaw(index: number): void {
    this.services[index]?.signal('SIGCONT');
  }

  async restart(index: number): Promise<void> {
    await this.kill(index, 'SIGTERM');
    await this.launch(index, 20_000);
  }

  async streamLeader(stream: string): Promise<number> {
    const nc = await this.connect();
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2_000, checkAPI: false });
      const info = await jsm.streams.info(stream);
      const leader = info.cluster?.leader;
      const index = this.ports.findIndex((_, i) => `n${i + 1}` === leader);
      if (index < 0) throw new Error(`stream ${stream} has no leader among ${this.ports.length} nodes (${String(leader)})`);
      return index;
    } finally {
      await this.closeConnection(nc);
    }
  }

  private async closeConnection(nc: NatsConnection): Promise<void> {
    this.connections.delete(nc);
    await nc.close();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all([...this.connections].map((nc) => nc.close().catch(() => undefined)));
    this.connections.clear();
    await Promise.all(
      this.services.map(async (service) => {
        if (service === undefined) return;
        service.signal('SIGCONT');
        await service.stop();
      }),
    );
    this.services.fill(undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
