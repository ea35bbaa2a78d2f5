import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { createJetStreamWriter, ensureJetStream } from '@streamgate/server/jetstream';
import { freePort, spawnService, startNatsCluster } from '@streamgate/testkit';
import type { NatsCluster, Service } from '@streamgate/testkit';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import type { SessionTarget } from './taskSession.js';
import type { JetStreamReplicas } from './taskWorkloads.js';

/** The JetStream stream holding the bench's per-task subjects (`STREAMGATE.task:<i>`). */
export const BENCH_JETSTREAM = 'STREAMGATE';

const SEED_CHUNK = 5_000;

/** A JetStream stream on private nats-servers: a JetStream series' log. */
export interface JetStreamTarget extends Pick<SessionTarget, 'url' | 'flush' | 'seed'> {
  /**
   * `nats://127.0.0.1:<port>[,127.0.0.1:<port>…]/STREAMGATE`, every node as a seed: what tokens
   * and RELAY_JETSTREAM_ALLOWLIST name.
   */
  readonly url: string;
  /** The nats-server processes, one per replica, metered together as the series' log. */
  readonly pids: readonly number[];
  /** The bench's own connection: seeds, purges, and the publisher's writes go through it. */
  readonly connection: NatsConnection;
  readonly stream: string;
  readonly replicas: JetStreamReplicas;
  /** Closes the connection, stops the servers, removes their stores. */
  stop(): Promise<void>;
}

/** What a target is made of once its servers answer: how to reach them, and how to stop them. */
interface RunningServers {
  readonly seeds: readonly string[];
  readonly pids: readonly number[];
  readonly connection: NatsConnection;
  stop(): Promise<void>;
}

/**
 * The stream created as writers and relays need it (ensureJetStream: subjects `STREAMGATE.*`,
 * file storage, republish to `$SG.live.>`) with `replicas` replicas, each on a nats-server of its
 * own: 1, one standalone server, the peer of one Redis; 3, a 3-node cluster (testkit's
 * startNatsCluster), where a write is acknowledged once two nodes hold it, and the log's cost is
 * the three processes together. Every server is pinned to the client side's cores, where Redis is.
 */
export async function startJetStreamTarget(pinning: Pinning, replicas: JetStreamReplicas = 1): Promise<JetStreamTarget> {
  const servers = replicas === 1 ? await startStandalone() : await startCluster(replicas);
  try {
    if (pinning.pinned) for (const pid of servers.pids) pinProcess(pid, pinning.plan.clientCpus);
    const { connection } = servers;
    const jsm = await jetstreamManager(connection, { timeout: 10_000 });
    const ensured = await ensureJetStream(jsm, { stream: BENCH_JETSTREAM }, { replicas });
    if (!ensured.ok) throw new Error(`the bench's JetStream stream: ${ensured.error.code}: ${ensured.error.message}`);
    const writer = createJetStreamWriter({ connection, stream: BENCH_JETSTREAM, timeoutMs: 30_000 });
    return {
      url: `nats://${servers.seeds.join(',')}/${BENCH_JETSTREAM}`,
      pids: servers.pids,
      connection,
      stream: BENCH_JETSTREAM,
      replicas,
      // Every message of the stream, as FLUSHALL empties a Redis; the sequence goes on from where it was.
      flush: async () => void (await jsm.streams.purge(BENCH_JETSTREAM)),
      // As seedStreams does on Redis: every subject has its task's start before a tab subscribes.
      seed: async (streams) => {
        for (let from = 0; from < streams.length; from += SEED_CHUNK) {
          const results = await Promise.all(
            streams.slice(from, from + SEED_CHUNK).map((name) => writer.publish({ name, schema: undefined }, { seed: true })),
          );
          const failed = results.find((r) => !r.ok);
          if (failed !== undefined && !failed.ok) throw new Error(`seeding the JetStream subjects failed: ${failed.error.message}`);
        }
      },
      stop: async () => {
        await writer.close();
        await servers.stop();
      },
    };
  } catch (error) {
    await servers.stop();
    throw error;
  }
}

/**
 * One nats-server with JetStream, standalone (no cluster block: nats-server 2.9 refuses a
 * clustered JetStream without routes, so testkit's startNatsCluster cannot make one node), on a
 * free port of 127.0.0.1 with a store of its own.
 */
async function startStandalone(): Promise<RunningServers> {
  const dir = await mkdtemp(join(tmpdir(), 'streamgate-bench-nats-'));
  let service: Service | undefined;
  let nc: NatsConnection | undefined;
  try {
    const port = await freePort();
    const config = join(dir, 'nats.conf');
    await writeFile(
      config,
      [
        'server_name: bench',
        `listen: 127.0.0.1:${port}`,
        `jetstream { store_dir: "${join(dir, 'store')}", max_memory_store: 64MB, max_file_store: 4GB }`,
        '',
      ].join('\n'),
    );
    service = await spawnService({ name: `nats-server:${port}`, command: 'nats-server', args: ['--config', config] });
    // nats-server logs on stderr, which readyPattern does not watch.
    await service.waitForLine(/Server is ready/, 20_000);
    nc = await connect({ servers: `127.0.0.1:${port}`, name: 'streamgate-bench' });
    const connection = nc;
    const stopService = service;
    return {
      seeds: [`127.0.0.1:${port}`],
      pids: [service.pid],
      connection,
      stop: async () => {
        await connection.close();
        await stopService.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await nc?.close().catch(() => undefined);
    await service?.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A `size`-node JetStream cluster on free ports of 127.0.0.1 (testkit), ready for a stream with a replica on each node. */
async function startCluster(size: number): Promise<RunningServers> {
  const cluster: NatsCluster = await startNatsCluster({ size });
  try {
    const pids = cluster.nodes.map((node) => {
      if (node.service === undefined) throw new Error(`nats-server ${node.name} has no process`);
      return node.service.pid;
    });
    // Closed by the cluster's stop().
    const connection = await cluster.connect({ name: 'streamgate-bench' });
    return { seeds: cluster.nodes.map((node) => `127.0.0.1:${node.port}`), pids, connection, stop: () => cluster.stop() };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
