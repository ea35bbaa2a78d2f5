import { spawnApp } from './spawnApps.js';
import type { AppProcess } from './spawnApps.js';

export interface IngestProcessOptions {
  readonly name: string;
  readonly redisUrl: string;
  /** The INGEST_TOPOLOGY JSON (chains, providers, streams). */
  readonly topology: unknown;
  readonly env?: Readonly<Record<string, string>>;
}

/** An ingest worker from source, on loopback, on a port the kernel picks. */
export function spawnIngest(options: IngestProcessOptions): Promise<AppProcess> {
  return spawnApp('apps/ingest/src/main.ts', options.name, {
    INGEST_HOST: '127.0.0.1',
    INGEST_PORT: '0',
    INGEST_WORKER_ID: options.name,
    INGEST_REDIS_URL: options.redisUrl,
    INGEST_TOPOLOGY: JSON.stringify(options.topology),
    LOG_LEVEL: 'info',
    ...options.env,
  });
}
