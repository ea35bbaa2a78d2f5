import { pino } from 'pino';
import { ExitCode, FaultPolicy, exitOnConfigError } from '@streamgate/boot';
import { parseIngestConfig } from './config.js';
import { createIngest } from './createIngest.js';
import type { Ingest } from './createIngest.js';

/**
 * After a fault, how long closing may take: it releases this worker's leases, so another worker
 * takes its streams over at once instead of after INGEST_LEASE_TTL_MS.
 */
const FAULT_CLOSE_BUDGET_MS = 3_000;

const bootLog = pino({ name: 'ingest' });
const faults = new FaultPolicy({ app: 'ingest', log: bootLog }).install();
const parsed = parseIngestConfig(process.env);
if (!parsed.ok) exitOnConfigError(bootLog, parsed.error);
const config = parsed.config;
const log = pino({ name: 'ingest', level: config.LOG_LEVEL });
let ingest: Ingest;
try {
  ingest = await createIngest(config, log);
} catch (error) {
  log.fatal({ err: error, exitCode: ExitCode.startup }, 'ingest failed to start');
  process.exit(ExitCode.startup);
}
faults.countWith((kind) => ingest.metrics.fault(kind));
faults.shutdownWith(() => ingest.close(), FAULT_CLOSE_BUDGET_MS);
log.info({ port: ingest.port, worker: config.INGEST_WORKER_ID, streams: config.topology.streams.length, venues: Object.keys(config.topology.venues) }, 'listening');

let stopping = false;
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  ingest.close().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
