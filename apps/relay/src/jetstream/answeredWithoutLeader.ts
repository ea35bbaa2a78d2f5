import type { StreamInfo as JetStreamInfo } from '@nats-io/jetstream';

/**
 * A replicated stream's STREAM.INFO answered while it has no leader: nats-server then lets a
 * replica answer with its own state, which may be far behind (a node just thawed reported
 * last_seq 20 of 1,020). Taken as the stream's state, it reads as sequences that fell, and every
 * watched stream would be reset. Such an answer says nothing about the stream until a leader is
 * elected.
 */
export function answeredWithoutLeader(info: JetStreamInfo): boolean {
  return info.cluster !== undefined && (info.cluster.leader ?? '') === '' && info.config.num_replicas > 1;
}
