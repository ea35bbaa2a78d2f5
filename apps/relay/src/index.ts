export { createRelay } from './createRelay.js';
export type { Relay } from './createRelay.js';
export { parseRelayConfig, relayConfigSchema } from './config.js';
export type { RelayConfig } from './config.js';
export { StreamHub } from './core/StreamHub.js';
export type { StreamSource, StreamEntry, StreamInfo } from './core/StreamSource.js';
export type { Connection, TopicPublisher } from './core/Connection.js';
export { classifyRecovery } from './core/classifyRecovery.js';
