/**
 * `@streamgate/ingest-core/jetstream`: ingest's write step on a NATS JetStream target
 * (docs/protocol.md §17). A subpath of its own, so a worker on Redis alone never loads the NATS client.
 */
export { JetStreamStreamWriter } from './JetStreamStreamWriter.js';
export type { JetStreamStreamWriterOptions } from './JetStreamStreamWriter.js';
export { ingestMsgId } from './ingestMsgId.js';
