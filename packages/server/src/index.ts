export * from './SigningKeySet.js';
export * from './generateSigningKey.js';
export * from './jwksDocument.js';
export * from './createJwksHandler.js';
export * from './createTokenIssuer.js';
export * from './createPublisher.js';
export * from './relayTokenProcedure.js';
export type { InferRelayPayload, RelaySubscription, StreamDefinition, StreamRef } from '@streamgate/protocol';
export { defineStream } from '@streamgate/protocol';
export { placeStream } from '@streamgate/redis';
export * from './createRevoker.js';
export { createJetStreamWriter } from './jetstream/createJetStreamWriter.js';
export type {
  JetStreamConnectionOptions,
  JetStreamCredentials,
  JetStreamPublishOptions,
  JetStreamPublishResult,
  JetStreamWriter,
  JetStreamWriterOptions,
} from './jetstream/createJetStreamWriter.js';
export type { JetStreamPublishError, JetStreamPublishErrorCode } from './jetstream/JetStreamPublishError.js';
export { ensureJetStream } from './jetstream/ensureJetStream.js';
export type { EnsureJetStreamError, EnsureJetStreamOptions, EnsureJetStreamResult } from './jetstream/ensureJetStream.js';
