import type { StreamName } from '@streamgate/protocol';

/** What a hub tells demand: its streams with subscribers now. */
export interface SubscribedStreams {
  streamsWithSubscribers(): StreamName[];
}

/**
 * The streams each Redis target's heartbeat carries: the target's own hub's, and on the JetStream
 * demand target every JetStream target's as well. A JetStream target has no Redis of its own
 * (docs/protocol.md §17), so its streams ride in the heartbeat of the Redis ingest reads demand
 * from: one heartbeat per Redis per interval, over the connection that Redis already has.
 * Throws when there are JetStream hubs and no allowlisted demand target (config refuses that).
 */
export function demandFeeds(
  redisHubs: ReadonlyMap<string, SubscribedStreams>,
  jetStreamHubs: ReadonlyMap<string, SubscribedStreams>,
  jetStreamDemandTarget: string | undefined,
): Map<string, () => StreamName[]> {
  if (jetStreamHubs.size > 0 && (jetStreamDemandTarget === undefined || !redisHubs.has(jetStreamDemandTarget))) {
    throw new Error(
      `no allowlisted Redis target to record JetStream demand in (RELAY_JETSTREAM_DEMAND_TARGET=${jetStreamDemandTarget ?? 'unset'})`,
    );
  }
  const feeds = new Map<string, () => StreamName[]>();
  for (const [target, hub] of redisHubs) {
    const hubs = target === jetStreamDemandTarget ? [hub, ...jetStreamHubs.values()] : [hub];
    feeds.set(target, hubs.length === 1 ? () => hub.streamsWithSubscribers() : () => unitedStreams(hubs));
  }
  return feeds;
}

// A name read on a Redis target and on a JetStream one is one member of the demand set: sent once.
function unitedStreams(hubs: readonly SubscribedStreams[]): StreamName[] {
  const united = new Set<StreamName>();
  for (const hub of hubs) for (const stream of hub.streamsWithSubscribers()) united.add(stream);
  return [...united];
}
