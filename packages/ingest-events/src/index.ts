export * from './ingestEvents.js';
