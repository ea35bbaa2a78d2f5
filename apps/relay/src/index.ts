// What other workspace packages use of the relay: the config schema and parser (the deploy tests
// check the shipped manifests against them). The relay is started by main.ts, not embedded.
export { parseRelayConfig, relayConfigSchema } from './config.js';
