import type { PublishError } from '../PublishError.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';

/**
 * A JetStream target's refusal as createPublisher answers it. The publisher's codes name Redis
 * because they predate JetStream targets; on a JetStream target they mean the same of the NATS
 * cluster (the message says which), so that code written against PublishError (an exhaustive
 * switch, a retry on `redis_unavailable`) handles a placement list mixing both logs unchanged:
 * - `jetstream_unavailable` (no connection, no stream leader, an election) is `redis_unavailable`,
 *   retryable, with the same `written`;
 * - `jetstream_rejected` (a limit of the stream, a subject another stream captures),
 *   `jetstream_stream_missing` (no JetStream stream holds the subject: create it, ensureJetStream)
 *   and `jetstream_unauthorized` (the servers refused the login) are `redis_rejected`, not
 *   retryable, `written: 'no'`: all are configuration to fix, not a moment to wait out;
 * - the input refusals, `timeout` and `closed` are PublishError's own.
 */
export function publishErrorOfJetStream(error: JetStreamPublishError): PublishError {
  switch (error.code) {
    case 'stream_invalid':
    case 'payload_invalid':
    case 'payload_too_large':
    case 'idempotency_key_invalid':
    case 'timeout':
    case 'closed':
      return error;
    case 'jetstream_unavailable':
      return { code: 'redis_unavailable', retryable: true, written: error.written, message: error.message };
    case 'jetstream_stream_missing':
    case 'jetstream_rejected':
    case 'jetstream_unauthorized':
      return { code: 'redis_rejected', retryable: false, written: 'no', message: error.message };
    case 'fenced':
    case 'options_invalid':
      // Answers to `expectLastId`, which the publisher never sends; kept total rather than cast.
      return { code: 'redis_rejected', retryable: false, written: 'no', message: error.message };
  }
}
