import { errorMessage } from '@streamgate/ingest-core';
import type { VenueFeedOptions } from './VenueFeedOptions.js';
import type { VenueNotice } from './VenueNotice.js';
import { VenueSession } from './VenueSession.js';
import type { VenueLinkError, VenueSessionOptions } from './VenueSession.js';
import type { VenuePayload } from './venueSchemas.js';
import type { OpenShardSession, VenueShard } from './VenueShard.js';

/** What a shard's session reports to the feed, only while the session is the shard's current one. */
export interface ShardSessionPorts {
  /** The feed is open and `shard` (at `generation`) is still the one at its index. */
  isLive(shard: VenueShard, generation: number): boolean;
  linkUp(shard: VenueShard): void;
  linkDown(shard: VenueShard): void;
  payload(payload: VenuePayload): void;
  notice(notice: VenueNotice): void;
  crashed(shard: VenueShard, reason: string): void;
  /** The venue refused the app key at CONNECT: final for every session of the key, not just this one. */
  keyRefused(shard: VenueShard, reason: string): void;
}

/**
 * Opens each shard's MQTT session with hooks bound to the shard's generation at opening, so
 * events of a replaced session are dropped. A CONNECT refusing the app key goes to the feed,
 * which stops under the key (a redial would knock on the venue for ever); another refusal that
 * cannot clear by itself (`judgeConnack`) keeps redialling, so it is reported once until the
 * session connects rather than retried quietly.
 */
export function openShardSessions(options: VenueFeedOptions, ports: ShardSessionPorts): OpenShardSession {
  const { venue, log } = options;
  return (shard) => {
    const generation = shard.generation;
    const live = () => ports.isLive(shard, generation);
    return (options.openSession ?? ((o: VenueSessionOptions) => new VenueSession(o)))({
      mqttUrl: options.mqttUrl,
      appKey: options.appKey,
      sessionId: shard.sessionId,
      connectTimeoutMs: options.connectTimeoutMs,
      onLinkUp: () => {
        if (live()) ports.linkUp(shard);
      },
      onLinkDown: (reason: VenueLinkError) => {
        if (!live()) return;
        log.warn({ venue, shard: shard.index, reason: reason.message }, 'venue session down');
        ports.linkDown(shard);
      },
      onPayload: (payload) => {
        if (live()) ports.payload(payload);
      },
      onGarbage: (topic, why) => {
        options.events?.garbage?.(why);
        log.warn({ venue, shard: shard.index, topic, why }, 'venue payload refused');
      },
      onConnectFailed: (error, attempt) => {
        if (!live()) return;
        log.warn({ venue, shard: shard.index, attempt, err: error.message }, 'venue session connect failed');
        if (error.code === 'key_refused') return ports.keyRefused(shard, error.message);
        if (!error.retryable && shard.latchRefusal()) ports.notice({ type: 'session_refused', shard: shard.index, reason: error.message });
      },
      onCallbackError: (hook, error) => {
        if (live()) ports.crashed(shard, `${hook} threw: ${errorMessage(error)}`);
      },
    });
  };
}
