import { spawnSync } from 'node:child_process';
import { redisPing } from './redisPing.js';
import { ServiceError, spawnService } from './spawnService.js';
import type { Service } from './spawnService.js';
import { waitFor } from './waitFor.js';

/** What starting one `redis-server` process needs; StartRedisOptions and the cluster options supply it. */
export interface LaunchRedisOptions {
  /** Deadline for the server to answer PING. Default 10 000 ms. */
  startTimeoutMs?: number;
  /** Extra `redis-server` arguments, after the defaults (so they override them). */
  args?: readonly string[];
  echo?: boolean;
}

/** The ports the developer's own Redis (and its cluster bus) use; tests must never touch them. */
const RESERVED_REDIS_PORTS = new Set([6379, 16379]);
export const REDIS_BIND_ATTEMPTS = 5;

export function isReservedRedisPort(port: number): boolean {
  return RESERVED_REDIS_PORTS.has(port);
}

export function assertRedisInstalled(binary: string): void {
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    const code = (probe.error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `${binary} is not installed or not on PATH; the tests need a real Redis server binary: ` +
            `${process.platform === 'darwin' ? 'brew install redis' : 'apt-get install redis-server'} ` +
            '(or run `node scripts/bootstrap.mjs`, which says what to install on this platform and installs it as root on Debian)'
        : `${binary} --version failed: ${probe.error.message}`,
      { cause: probe.error },
    );
  }
}

export function isRedisBindFailure(error: unknown): boolean {
  return error instanceof ServiceError && /Address already in use|Could not create server TCP listening socket/.test(error.output);
}

/** Starts `redis-server` on `port` without persistence, in `dir`; resolves once it answers PING. */
export async function launchRedisServer(binary: string, port: number, dir: string, options: LaunchRedisOptions): Promise<Service> {
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
 * Starts the server again on the port it had. The old listener is gone, but the port is not
 * reserved for us: if someone took it the restart fails loudly instead of moving the server,
 * since clients (and cluster peers) hold this port.
 */
export async function relaunchRedisServer(binary: string, port: number, dir: string, options: LaunchRedisOptions): Promise<Service> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= REDIS_BIND_ATTEMPTS; attempt += 1) {
    try {
      return await launchRedisServer(binary, port, dir, options);
    } catch (error) {
      if (!isRedisBindFailure(error)) throw error;
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
  throw lastError;
}
