import { pino } from 'pino';
import { ConfigError, parseRelayConfig } from './config.js';
import { createRelay } from './createRelay.js';

const bootLog = pino({ name: 'relay' });
let config;
try {
  config = parseRelayConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  bootLog.fatal(error.message);
  process.exit(78); // EX_CONFIG
}
const log = pino({ name: 'relay', level: config.LOG_LEVEL });
const relay = await createRelay(config, log);
log.info({ port: relay.port, node: config.RELAY_NODE_ID }, 'listening');

let stopping = false;
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  relay.close().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
