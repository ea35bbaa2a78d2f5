export * from './SigningKeySet.js';
export * from './generateSigningKey.js';
export * from './jwksDocument.js';
export * from './createJwksHandler.js';
export * from './createTokenIssuer.js';
export * from './createPublisher.js';
export * from './relayTokenProcedure.js';
export type { InferRelayPayload, RelaySubscription, StreamRef } from '@streamgate/protocol';
export { defineStream } from '@streamgate/protocol';
