export { MemoryDemandSource } from './MemoryDemandSource.js';
export { MemoryLeaseStore } from './MemoryLeaseStore.js';
export { MemoryStreamWriter } from './MemoryStreamWriter.js';
