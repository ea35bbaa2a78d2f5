import { JetStreamApiError } from '@nats-io/jetstream';
import { ClosedConnectionError, DrainingConnectionError, TimeoutError } from '@nats-io/transport-node';
import { jetStreamId } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import { errorText } from '../PublishError.js';
import { hasCause, isNoResponders } from './errorCauses.js';
import { jetStreamRepublish } from '@streamgate/protocol';
import type { PublishError, PublishWritten } from '../PublishError.js';

/*
 * A separate union rather than new members of PublishError: until createPublisher writes to
 * JetStream (a later change decides that API), no caller of createPublisher can receive these
 * codes, and every exhaustive switch over PublishErrorCode stays as it is. The refusals made
 * before anything is sent are PublishError's own members, word for word.
 */

/** Refusals made before anything is sent, shared with createPublisher. */
export type JetStreamInputError = Extract<
  PublishError,
  { code: 'stream_invalid' | 'payload_invalid' | 'payload_too_large' | 'idempotency_key_invalid' }
>;

export type JetStreamPublishError =
  | JetStreamInputError
  /** `expectLastId` is not a JetStream id (`0-<sequence>`). */
  | { code: 'options_invalid'; retryable: false; field: 'expectLastId'; message: string }
  /** No ack within the writer's `timeoutMs` after the message was sent (a leader election, a lost connection). */
  | { code: 'timeout'; retryable: true; written: 'unknown'; message: string }
  /**
   * No connection within `timeoutMs`, or the cluster cannot store now: the stream has no leader
   * (an election; its subjects have no responders meanwhile) or too few current replicas. Those
   * are `written: 'no'`; a connection lost under the publish is `unknown`.
   */
  | { code: 'jetstream_unavailable'; retryable: true; written: PublishWritten; message: string }
  /**
   * No JetStream stream holds `subject`: NATS answered "no responders" and the JetStream meta
   * leader knows no stream for it (a stream between leaders is silent too, and is answered
   * `jetstream_unavailable`). A configuration error: create the stream (ensureJetStream).
   */
  | { code: 'jetstream_stream_missing'; retryable: false; written: 'no'; subject: string; message: string }
  /**
   * `expectLastId` was not the task stream's last entry: another writer (or an earlier attempt
   * without the same idempotency key) wrote since. `lastId` is the entry that is last, when
   * JetStream said. Nothing was written; this writer has lost its turn and must not retry blindly.
   */
  | { code: 'fenced'; retryable: false; written: 'no'; expectedId: StreamId; lastId: StreamId | null; message: string }
  /**
   * The NATS servers refused the writer's login (wrong or missing credentials, an expired
   * account). Nothing was sent; retrying does not help until the credentials are fixed, though
   * the next publish does try to log in again.
   */
  | { code: 'jetstream_unauthorized'; retryable: false; written: 'no'; message: string }
  /** JetStream refused this message for good (`errCode`: its API error code, e.g. a limit of the stream). */
  | { code: 'jetstream_rejected'; retryable: false; written: 'no'; status: number; errCode: number; message: string }
  /** writer.close() was called, or the NATS connection it was given is closed or draining. */
  | { code: 'closed'; retryable: false; written: PublishWritten; message: string };

export type JetStreamPublishErrorCode = JetStreamPublishError['code'];

// JetStream API error codes (server errors.json) of refusals that say "not now", not "never".
const TRANSIENT_API_CODES = new Set([
  10008, // JSClusterNotAvailErr: no stream leader yet (an election)
  10074, // JSClusterNotLeaderErr
  10023, // JSInsufficientResourcesErr
  10077, // JSStreamStoreFailedF
  10164, // StreamWrongLastSequenceUnknown ("wrong last sequence: unknown"): the leader could not check yet
]);
const WRONG_LAST_SEQUENCE = 10071;

/** Whether a JetStream API refusal says "not now" (an election, a peer missing) rather than "never". */
export function isTransientJetStreamApiError(error: JetStreamApiError): boolean {
  return TRANSIENT_API_CODES.has(error.code) || error.status === 503;
}

/** Where a failed publish went: the JetStream stream, the task's subject, the fence it carried. */
export type JetStreamPublishContext = { jetStream: string; subject: string; expectedId: StreamId | null };

/** What the JetStream client's rejection of one publish means to the caller. */
export function classifyJetStreamPublishError(error: unknown, context: JetStreamPublishContext): JetStreamPublishError {
  const { jetStream, subject, expectedId } = context;
  const message = errorText(error);
  if (error instanceof JetStreamApiError) {
    if (error.code === WRONG_LAST_SEQUENCE && expectedId !== null) {
      const last = Number(/wrong last sequence: ([0-9]+)/.exec(message)?.[1]);
      const lastId = Number.isSafeInteger(last) ? jetStreamId(last) : null;
      return {
        code: 'fenced',
        retryable: false,
        written: 'no',
        expectedId,
        lastId,
        message: `${subject}: expected ${expectedId} to be the last entry, but it is ${lastId ?? 'another'} (${message}); nothing was written`,
      };
    }
    if (isTransientJetStreamApiError(error)) {
      return { code: 'jetstream_unavailable', retryable: true, written: 'no', message: `jetstream cannot store now: ${message}` };
    }
    return {
      code: 'jetstream_rejected',
      retryable: false,
      written: 'no',
      status: error.status,
      errCode: error.code,
      message: `jetstream refused the message on ${subject}: ${message}`,
    };
  }
  if (isNoResponders(error)) {
    return {
      code: 'jetstream_stream_missing',
      retryable: false,
      written: 'no',
      subject,
      message:
        `no JetStream stream holds ${subject} (no responders): create the stream ${jetStream} with ensureJetStream ` +
        `(subjects '${jetStream}.*', republished to '${jetStreamRepublish(jetStream).dest}') before publishing`,
    };
  }
  if (hasCause(error, TimeoutError)) {
    return {
      code: 'timeout',
      retryable: true,
      written: 'unknown',
      message: `no ack for ${subject}: ${message}; the message may have been stored`,
    };
  }
  if (hasCause(error, ClosedConnectionError) || hasCause(error, DrainingConnectionError)) {
    return { code: 'closed', retryable: false, written: 'unknown', message: `the NATS connection closed under the publish: ${message}` };
  }
  // Anything else (a broken socket, an ack that is not JSON) happened after the message may have
  // left: the caller retries with the same idempotency key.
  return { code: 'jetstream_unavailable', retryable: true, written: 'unknown', message: `publish to ${subject} failed: ${message}` };
}
