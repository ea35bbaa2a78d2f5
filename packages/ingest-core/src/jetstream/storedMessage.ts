import type { JetStreamManager } from '@nats-io/jetstream';
import type { LogMessage } from './stateRecords.js';

/** By sequence, a subject's first message at or after a sequence, or a subject's last. */
export type StoredQuery = { seq: number } | { next_by_subj: string; seq: number } | { last_by_subj: string };

/**
 * STREAM.MSG.GET, answered by the stream's leader (direct get is not used: a replica may not hold
 * the newest messages yet, and these reads decide what is already written). Null when no message
 * matches; rejects as the JetStream client does otherwise.
 */
export async function storedMessage(jsm: JetStreamManager, stream: string, query: StoredQuery): Promise<LogMessage | null> {
  // The client's declared query type predates `next_by_subj` (server 2.9+); it passes it through
  // (a `next_by_subj` query has the `seq` that type asks for).
  const message = await jsm.streams.getMessage(stream, query);
  if (message === null) return null;
  return { seq: message.seq, header: (name) => message.header.get(name) || undefined, data: message.data };
}
