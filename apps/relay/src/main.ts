import { pino } from 'pino';
import { Counter } from 'prom-client';
import { ExitCode, FaultPolicy, exitOnConfigError } from '@streamgate/boot';
import { parseRelayConfig } from './config.js';
import { createRelay } from './createRelay.js';
import type { Relay } from './createRelay.js';

/** After the fast drain window, how long the sockets' closes and Redis disconnects may take. */
const FAULT_CLOSE_MARGIN_MS = 2_000;

const bootLog = pino({ name: 'relay' });
const faults = new FaultPolicy({ app: 'relay', log: bootLog }).install();
const parsed = parseRelayConfig(process.env);
if (!parsed.ok) exitOnConfigError(bootLog, parsed.error);
const config = parsed.config;
const log = pino({ name: 'relay', level: config.LOG_LEVEL });

let relay: Relay;
try {
  relay = await createRelay(config, log);
} catch (error) {
  log.fatal({ err: error, exitCode: ExitCode.startup }, 'relay failed to start');
  process.exit(ExitCode.startup);
}
const faultCounter = new Counter({
  name: 'streamgate_relay_faults_total',
  help: 'Unhandled rejections and uncaught exceptions; each one ends the process after a short drain',
  labelNames: ['kind'],
  registers: [relay.metrics.registry],
});
faults.countWith((kind) => faultCounter.inc({ kind }));
// A fault drains over the fast window (seconds, not the deploy window of many minutes): the
// process state is suspect, but its sockets can still be told to resume elsewhere.
faults.shutdownWith(async () => {
  const drained = relay.drain();
  relay.hurryDrain();
  await drained;
  await relay.close();
}, config.RELAY_DRAIN_FAST_WINDOW_MS + FAULT_CLOSE_MARGIN_MS);
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
