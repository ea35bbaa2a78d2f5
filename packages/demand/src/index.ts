export type { DemandSink } from './DemandSink.js';
export type { DemandSource } from './DemandSource.js';
export { INGEST_DEMAND_KEY } from './ingestDemandKey.js';
export { RedisDemandRegistry } from './RedisDemandRegistry.js';
export { UnitedDemandSource } from './UnitedDemandSource.js';
