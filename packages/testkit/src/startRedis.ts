import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { freePort } from './freePort.js';
import {
  REDIS_BIND_ATTEMPTS,
  assertRedisInstalled,
  isRedisBindFailure,
  isReservedRedisPort,
  launchRedisServer,
  relaunchRedisServer,
} from './launchRedisServer.js';
import type { ExitStatus, Service } from './spawnService.js';

export interface StartRedisOptions {
  /** Deadline for the server to answer PING, per attempt. Default 10 000 ms. */
  startTimeoutMs?: number;
  /** Extra `redis-server` arguments, e.g. `['--maxmemory', '10mb']`. */
  args?: readonly string[];
  /** Default `redis-server` from PATH. */
  binary?: string;
  /** Copy the server's log to stderr; see SpawnServiceOptions.echo. */
  echo?: boolean;
}

export interface RedisServer extends AsyncDisposable {
  readonly port: number;
  /** `redis://127.0.0.1:<port>/0` */
  readonly url: string;
  /** The running server process, undefined between kill() and restart(). */
  readonly service: Service | undefined;
  /** A new ioredis connection; closed by stop(). */
  client(options?: RedisOptions): Redis;
  /** Kills the server (default SIGKILL: an outage, not a shutdown); connections stay open and retry. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus | undefined>;
  /**
   * Stops the server if running and starts it again on the same port and directory: empty by
   * default, or from its AOF when started with `args: ['--appendonly', 'yes', …]`.
   */
  restart(): Promise<void>;
  /** Closes every client, stops the server, removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a private `redis-server` on a free port of 127.0.0.1, without persistence, for one test
 * file. Use with `await using redis = await startRedis()` or call stop() in afterAll.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  assertRedisInstalled(binary);
  // Redis writes nothing with these settings, but a private --dir keeps any stray file
  // (a crash report, a manual SAVE in a test) out of the cwd.
  const dir = await mkdtemp(join(tmpdir(), 'streamgate-redis-'));

  let service: Service | undefined;
  let port = 0;
  for (let attempt = 1; service === undefined; attempt += 1) {
    port = await freePort();
    if (isReservedRedisPort(port)) continue;
    try {
      service = await launchRedisServer(binary, port, dir, options);
    } catch (error) {
      // freePort() only says the port was free a moment ago; another process may have taken it.
      if (!isRedisBindFailure(error) || attempt >= REDIS_BIND_ATTEMPTS) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  const url = `redis://127.0.0.1:${port}/0`;
  const clients = new Set<Redis>();
  let stopped = false;

  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<ExitStatus | undefined> => {
    const current = service;
    service = undefined;
    if (!current) return undefined;
    current.signal(signal);
    return current.exited;
  };

  const server: RedisServer = {
    port,
    url,
    get service() {
      return service;
    },
    client(clientOptions?: RedisOptions) {
      if (stopped) throw new Error(`redis-server on ${port} was stopped`);
      const client = new Redis(url, { ...clientOptions });
      clients.add(client);
      client.once('end', () => clients.delete(client));
      return client;
    },
    kill,
    async restart() {
      if (stopped) throw new Error(`redis-server on ${port} was stopped`);
      const current = service;
      service = undefined;
      await current?.stop();
      service = await relaunchRedisServer(binary, port, dir, options);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const client of clients) client.disconnect();
      clients.clear();
      await service?.stop();
      service = undefined;
      await rm(dir, { recursive: true, force: true });
    },
    [Symbol.asyncDispose]: () => server.stop(),
  };
  return server;
}
