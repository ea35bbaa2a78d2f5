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

// First SIGTERM/SIGINT: drain over RELAY_DRAIN_WINDOW_MS, then exit. A second one: spread what
// is left over RELAY_DRAIN_FAST_WINDOW_MS. Further signals change nothing (SIGKILL remains).
let signals = 0;
const stop = (signal: NodeJS.Signals): void => {
  signals += 1;
  if (signals > 1) {
    log.info({ signal }, 'signal during drain: draining faster');
    relay.hurryDrain();
    return;
  }
  log.info({ signal }, 'shutting down');
  relay
    .drain()
    .then(() => relay.close())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
