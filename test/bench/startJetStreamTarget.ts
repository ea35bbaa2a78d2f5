import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { createJetStreamWriter, ensureJetStream } from '@streamgate/server/jetstream';
import { freePort, spawnService } from '@streamgate/testkit';
import type { Service } from '@streamgate/testkit';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import type { SessionTarget } from './taskSession.js';

/** The JetStream stream holding the bench's per-task subjects (`STREAMGATE.task:<i>`). */
export const BENCH_JETSTREAM = 'STREAMGATE';

const SEED_CHUNK = 5_000;

/** A JetStream stream on a private single nats-server: the relay-jetstream series' log. */
export interface JetStreamTarget extends Pick<SessionTarget, 'url' | 'flush' | 'seed'> {
  /** `nats://127.0.0.1:<port>/STREAMGATE`: what tokens and RELAY_JETSTREAM_ALLOWLIST name. */
  readonly url: string;
  /** The nats-server process, metered as the series' log. */
  readonly pid: number;
  /** The bench's own connection: seeds, purges, and the publisher's writes go through it. */
  readonly connection: NatsConnection;
  readonly stream: string;
  /** Closes the connection, stops the server, removes its store. */
  stop(): Promise<void>;
}

/**
 * One nats-server with JetStream, standalone (no cluster block: nats-server 2.9 refuses a
 * clustered JetStream without routes, so testkit's startNatsCluster cannot make one node), on a
 * free port of 127.0.0.1 with a store of its own, and the stream created as writers and relays
 * need it (ensureJetStream: subjects `STREAMGATE.*`, file storage, republish to `$SG.live.>`) with
 * one replica: the peer of one Redis. Pinned to the client side's cores, where Redis is.
 */
export async function startJetStreamTarget(pinning: Pinning): Promise<JetStreamTarget> {
  const dir = await mkdtemp(join(tmpdir(), 'streamgate-bench-nats-'));
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
  let service: Service | undefined;
  let nc: NatsConnection | undefined;
  try {
    service = await spawnService({ name: `nats-server:${port}`, command: 'nats-server', args: ['--config', config] });
    // nats-server logs on stderr, which readyPattern does not watch.
    await service.waitForLine(/Server is ready/, 20_000);
    if (pinning.pinned) pinProcess(service.pid, pinning.plan.clientCpus);
    const connection = await connect({ servers: `127.0.0.1:${port}`, name: 'streamgate-bench' });
    nc = connection;
    const jsm = await jetstreamManager(connection, { timeout: 10_000 });
    const ensured = await ensureJetStream(jsm, { stream: BENCH_JETSTREAM }, { replicas: 1 });
    if (!ensured.ok) throw new Error(`the bench's JetStream stream: ${ensured.error.code}: ${ensured.error.message}`);
    const writer = createJetStreamWriter({ connection, stream: BENCH_JETSTREAM, timeoutMs: 30_000 });
    const pid = service.pid;
    const stopService = service;
    return {
      url: `nats://127.0.0.1:${port}/${BENCH_JETSTREAM}`,
      pid,
      connection,
      stream: BENCH_JETSTREAM,
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
