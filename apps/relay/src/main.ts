import { Counter } from 'prom-client';
import { appLogger, bootApp } from '@streamgate/boot';
import { parseRelayConfig } from './config.js';
import { createRelay } from './createRelay.js';
import { loadUws } from './edge/loadUws.js';

/** After the fast drain window, how long the sockets' closes and Redis disconnects may take. */
const FAULT_CLOSE_MARGIN_MS = 2_000;

// First SIGTERM/SIGINT: drain over RELAY_DRAIN_WINDOW_MS, then exit. A second one: spread what
// is left over RELAY_DRAIN_FAST_WINDOW_MS. Further signals change nothing (SIGKILL remains).
const {
  config,
  log,
  app: relay,
  faults,
} = await bootApp({
  app: 'relay',
  bootLog: appLogger('relay'),
  parseConfig: () => parseRelayConfig(process.env),
  log: (config) => appLogger('relay', config.LOG_LEVEL),
  create: createRelay,
  stop: {
    run: (relay) => relay.drain().then(() => relay.close()),
    again: (relay, signal, log) => {
      log.info({ signal }, 'signal during drain: draining faster');
      relay.hurryDrain();
    },
  },
});
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
// Which native binary serves the sockets, so a log shows the Node/platform the pod really runs on.
log.info(
  { port: relay.port, node: config.RELAY_NODE_ID, nodeVersion: process.version, uws: loadUws().binary, uwsBuild: loadUws().build },
  'listening',
);
