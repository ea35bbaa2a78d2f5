import { pino } from 'pino';
import { ConfigError, parseIngestConfig } from './config.js';
import { createIngest } from './createIngest.js';

const bootLog = pino({ name: 'ingest' });
let config;
try {
  config = parseIngestConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  bootLog.fatal(error.message);
  process.exit(78); // EX_CONFIG
}
const log = pino({ name: 'ingest', level: config.LOG_LEVEL });
const ingest = await createIngest(config, log);
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
