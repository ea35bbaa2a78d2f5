import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import type { IngestError } from '../IngestError.js';
import { apiErrorOf, natsIngestError, STREAM_NOT_FOUND } from './natsIngestError.js';

/** What the writer learns of a JetStream target before its first write. */
export interface IngestTargetFacts {
  /** `<STREAM>_INGEST`, holding the state logs. */
  readonly stateStream: string;
  /** The data stream's own per-message limit (`max_msg_size`; -1: none but the server's). */
  readonly maxMsgSize: number;
}

async function infoOrNull(jsm: JetStreamManager, stream: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(stream);
  } catch (error) {
    if (apiErrorOf(error)?.code === STREAM_NOT_FOUND) return null;
    throw error;
  }
}

function wantedState(stateStream: string, jetStream: string, replicas: number): Partial<StreamConfig> & Pick<StreamConfig, 'name'> {
  return {
    name: stateStream,
    // The description is the mark that the stream is ingest's, not a per-task one that happens to bear the name.
    description: `streamgate ingest state logs of ${jetStream}`,
    subjects: [`${stateStream}.*`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    // As durable as the entries it accounts for.
    num_replicas: replicas,
    discard: DiscardPolicy.Old,
  };
}

/**
 * Checks that the JetStream stream `jetStream` exists and creates (or checks) `<STREAM>_INGEST`
 * beside it, with the data stream's replicas. The data stream is never created here: relays and
 * backends need it configured as §17 says (ensureJetStream in @streamgate/server/jetstream), and
 * ingest must not create it otherwise.
 */
export async function openIngestTarget(
  jsm: JetStreamManager,
  jetStream: string,
): Promise<{ ok: true; facts: IngestTargetFacts } | { ok: false; error: IngestError }> {
  const stateStream = `${jetStream}_INGEST`;
  try {
    const data = await infoOrNull(jsm, jetStream);
    if (data === null) {
      return {
        ok: false,
        error: {
          code: 'jetstream_rejected',
          retryable: false,
          message: `JetStream stream ${jetStream} does not exist: create it as relays read it (subjects "${jetStream}.*", docs/protocol.md §17; ensureJetStream in @streamgate/server/jetstream does)`,
        },
      };
    }
    const wanted = wantedState(stateStream, jetStream, data.config.num_replicas);
    let state = await infoOrNull(jsm, stateStream);
    if (state === null) {
      try {
        state = await jsm.streams.add(wanted);
      } catch (error) {
        // Another worker created it meanwhile: "name in use" if its config differs, and 2.9 may
        // leave a concurrent add unanswered. Either way, what exists now is checked below.
        state = await infoOrNull(jsm, stateStream);
        if (state === null) throw error;
      }
    }
    const actual = state.config;
    if (actual.description !== wanted.description || JSON.stringify(actual.subjects) !== JSON.stringify(wanted.subjects)) {
      return {
        ok: false,
        error: {
          code: 'jetstream_rejected',
          retryable: false,
          message: `JetStream stream ${stateStream} exists but is not ingest's state stream for ${jetStream} (description ${JSON.stringify(actual.description ?? '')}, subjects ${JSON.stringify(actual.subjects)}); rename that stream or the data stream`,
        },
      };
    }
    return { ok: true, facts: { stateStream, maxMsgSize: data.config.max_msg_size ?? -1 } };
  } catch (error) {
    return { ok: false, error: natsIngestError(error, `opening JetStream streams ${jetStream} and ${stateStream}`) };
  }
}
