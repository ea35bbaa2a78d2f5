export * from './opsSnapshot.js';
export { OpsSnapshotPublisher } from './OpsSnapshotPublisher.js';
export type { OpsPublishFailure, OpsSnapshotPublisherOptions, OpsSnapshotSink } from './OpsSnapshotPublisher.js';
export { fitList } from './fitList.js';
