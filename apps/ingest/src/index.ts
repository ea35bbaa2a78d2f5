export { ConfigError, ingestConfigSchema, ingestTopologySchema, parseIngestConfig } from './config.js';
export type { ChainConfig, IngestConfig, IngestTopology, ProviderConfig, StreamSpec } from './config.js';
export { createIngest } from './createIngest.js';
export type { Ingest } from './createIngest.js';
