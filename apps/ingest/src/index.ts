// What other workspace packages use of the ingest worker: the config schema (the deploy tests check
// the shipped manifests against it) and the venue pieces the cross-process venue harness wires up
// around a simulated venue. The worker is started by main.ts, not embedded.
export { ingestConfigSchema } from './config.js';
export { VenueFeed } from './venue/VenueFeed.js';
export type { VenueFeedOptions } from './venue/VenueFeedOptions.js';
export type { VenueNotice } from './venue/VenueNotice.js';
export { RateLimiter } from './venue/RateLimiter.js';
export { VenueHttpClient } from './venue/VenueHttpClient.js';
export type { VenueKind, VenuePayload } from './venue/venueSchemas.js';
export { SymbolWriter } from './venue/SymbolWriter.js';
