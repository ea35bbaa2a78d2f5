export type { CoreLog } from './CoreLog.js';
export { errorMessage, IngestFailure } from './IngestError.js';
export type { IngestError, IngestErrorCode } from './IngestError.js';
export { IngestWorker } from './IngestWorker.js';
export type { IngestWorkerOptions, LeaseChange, WorkerEvents } from './IngestWorker.js';
export type { Lease, LeaseStore } from './LeaseStore.js';
export type { Fence, StreamWriter, WriteBatch, WriteEntry, WriteOutcome } from './StreamWriter.js';
export type { AdapterRun, RunContext, RunEnd, UpstreamAdapter } from './UpstreamAdapter.js';
