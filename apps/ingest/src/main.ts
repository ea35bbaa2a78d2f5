import { appLogger, bootApp } from '@streamgate/boot';
import { parseIngestConfig } from './config.js';
import { createIngest } from './createIngest.js';

/**
 * After a fault, how long closing may take: it releases this worker's leases, so another worker
 * takes its streams over at once instead of after INGEST_LEASE_TTL_MS.
 */
const FAULT_CLOSE_BUDGET_MS = 3_000;

// A second SIGTERM/SIGINT while closing changes nothing (SIGKILL remains).
const {
  config,
  log,
  app: ingest,
  faults,
} = await bootApp({
  app: 'ingest',
  bootLog: appLogger('ingest'),
  parseConfig: () => parseIngestConfig(process.env),
  log: (config) => appLogger('ingest', config.LOG_LEVEL),
  create: createIngest,
  // Past a lease TTL the other workers have taken the streams over anyway: nothing waiting longer
  // (a lease release on a Redis that is down) is worth holding a rollout for.
  stop: { run: (ingest) => ingest.close(), budgetMs: (config) => config.INGEST_LEASE_TTL_MS },
});
faults.countWith((kind) => ingest.metrics.fault(kind));
faults.shutdownWith(() => ingest.close(), FAULT_CLOSE_BUDGET_MS);
log.info(
  {
    port: ingest.port,
    worker: config.INGEST_WORKER_ID,
    streams: config.topology.streams.length,
    venues: Object.keys(config.topology.venues),
  },
  'listening',
);
