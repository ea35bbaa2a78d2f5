/**
 * `@streamgate/server/jetstream`: writing streams that live in NATS JetStream (docs/protocol.md
 * §17). A subpath of its own, so that a backend on Redis alone never loads the NATS client's types.
 */
export { createJetStreamWriter } from './createJetStreamWriter.js';
export type {
  JetStreamConnectionOptions,
  JetStreamCredentials,
  JetStreamPublishOptions,
  JetStreamPublishResult,
  JetStreamWriter,
  JetStreamWriterOptions,
} from './createJetStreamWriter.js';
export type { JetStreamPublishError, JetStreamPublishErrorCode } from './JetStreamPublishError.js';
export { ensureJetStream } from './ensureJetStream.js';
export type { EnsureJetStreamError, EnsureJetStreamOptions, EnsureJetStreamResult } from './ensureJetStream.js';
