import { JetStreamApiError } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';

const STREAM_NOT_FOUND = 10059;

/**
 * The JetStream stream whose subjects take `subject`, or null when none does, as the meta leader
 * knows it (it answers without the stream's leader). A publish answered "no responders" needs
 * this: in a cluster only the stream's leader subscribes to its subjects, so between a leader's
 * loss and the next election an existing stream is as silent as a missing one. Rejects when
 * JetStream does not answer.
 */
export async function streamHoldingSubject(js: JetStreamClient, subject: string): Promise<string | null> {
  const jsm = await js.jetstreamManager(false);
  try {
    return await jsm.streams.find(subject);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === STREAM_NOT_FOUND) return null;
    throw error;
  }
}
