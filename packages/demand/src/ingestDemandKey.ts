/**
 * The Redis sorted set (on the stream's own Redis) where relays and the auth backend record
 * demand: member = stream name, score = the epoch millisecond (Redis clock) until which someone
 * wants it. Ingest subscribes upstream while a score is in the future.
 */
export const INGEST_DEMAND_KEY = 'streamgate:demand';
