import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { freePort } from './freePort.js';
import { redisPing } from './redisPing.js';
import { ServiceError, spawnService } from './spawnService.js';
import type { ExitStatus, Service } from './spawnService.js';
import { waitFor } from './waitFor.js';

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

/** The port the developer's own Redis is on; tests must never touch it. */
const SHARED_REDIS_PORT = 6379;
const BIND_ATTEMPTS = 5;

function assertInstalled(binary: string): void {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    const code = (probe.error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `${binary} is not installed or not on PATH; the tests need a real Redis server binary: ` +
            'apt-get install redis-server (or run `node scripts/bootstrap.mjs`, which installs it as root on Debian)'
        : `${binary} --version failed: ${probe.error.message}`,
      { cause: probe.error },
    );
  }
}

function isBindFailure(error: unknown): boolean {
  return error instanceof ServiceError && /Address already in use|Could not create server TCP listening socket/.test(error.output);
}

async function launch(binary: string, port: number, dir: string, options: StartRedisOptions): Promise<Service> {
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const service = await spawnService({
    name: `redis-server:${port}`,
    command: binary,
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args ?? [])],
    readyPattern: /Ready to accept connections/,
    readyTimeoutMs: startTimeoutMs,
    ...(options.echo === undefined ? {} : { echo: options.echo }),
  });
  try {
    // The log line says the listener is up; PING proves this server, not a stranger, answers.
    await waitFor(() => redisPing(port), { timeoutMs: startTimeoutMs, message: `redis-server on ${port} answers PING` });
  } catch (error) {
    await service.stop();
    throw new ServiceError(service.name, 'did not answer PING', service.output(), { cause: error });
  }
  return service;
}

/**
 * Starts a private `redis-server` on a free port of 127.0.0.1, without persistence, for one test
 * file. Use with `await using redis = await startRedis()` or call stop() in afterAll.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  assertInstalled(binary);
  // Redis writes nothing with these settings, but a private --dir keeps any stray file
  // (a crash report, a manual SAVE in a test) out of the cwd.
  const dir = await mkdtemp(join(tmpdir(), 'streamgate-redis-'));

  let service: Service | undefined;
  let port = 0;
  for (let attempt = 1; service === undefined; attempt += 1) {
    port = await freePort();
    if (port === SHARED_REDIS_PORT) continue;
    try {
      service = await launch(binary, port, dir, options);
    } catch (error) {
      // freePort() only says the port was free a moment ago; another process may have taken it.
      if (!isBindFailure(error) || attempt >= BIND_ATTEMPTS) {
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
      // The old listener is gone, but the port is not reserved for us: if someone took it the
      // restart fails loudly instead of moving the server, since clients hold this port.
      let lastError: unknown;
      for (let attempt = 1; attempt <= BIND_ATTEMPTS; attempt += 1) {
        try {
          service = await launch(binary, port, dir, options);
          return;
        } catch (error) {
          if (!isBindFailure(error)) throw error;
          lastError = error;
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        }
      }
      throw lastError;
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
