/**
 * The Redis sorted set where relays and the auth backend record demand: member = stream name,
 * score = the epoch millisecond (Redis clock) until which someone wants it. Ingest subscribes
 * upstream while a score is in the future. It is on the stream's own Redis; a stream on a NATS
 * JetStream target has none, and its demand is in the Redis the operator names for it
 * (RELAY_JETSTREAM_DEMAND_TARGET, AUTH_JETSTREAM_DEMAND_TARGET: the one its ingest reads).
 */
export const INGEST_DEMAND_KEY = 'streamgate:demand';
