import type { AppProcess } from './spawnApps.js';
import { readListeningPort } from './readListeningPort.js';
import { spawnTsEntry } from './spawnTsEntry.js';

export interface IngestProcessOptions {
  readonly name: string;
  readonly redisUrl: string;
  /** The INGEST_TOPOLOGY JSON (chains, providers, streams). */
  readonly topology: unknown;
  readonly env?: Readonly<Record<string, string>>;
}

/** An ingest worker from source, on loopback, on a port the kernel picks. */
export async function spawnIngest(options: IngestProcessOptions): Promise<AppProcess> {
  const service = await spawnTsEntry('apps/ingest/src/main.ts', {
    name: options.name,
    env: {
      INGEST_HOST: '127.0.0.1',
      INGEST_PORT: '0',
      INGEST_WORKER_ID: options.name,
      INGEST_REDIS_URL: options.redisUrl,
      INGEST_TOPOLOGY: JSON.stringify(options.topology),
      LOG_LEVEL: 'info',
      ...options.env,
    },
    readyPattern: /"msg":"listening"/,
    readyTimeoutMs: 30_000,
  });
  const port = await readListeningPort(service);
  return { service, port, httpUrl: `http://127.0.0.1:${port}` };
}
