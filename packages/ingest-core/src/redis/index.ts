export { ingestKeys } from './ingestKeys.js';
export type { IngestKeys } from './ingestKeys.js';
export { RedisLeaseStore } from './RedisLeaseStore.js';
export type { LeaseReplicaWait, RedisLeaseStoreOptions } from './RedisLeaseStore.js';
export { RedisStreamWriter } from './RedisStreamWriter.js';
export type { RedisStreamWriterOptions } from './RedisStreamWriter.js';
