import { JetStreamApiError } from '@nats-io/jetstream';
import { AuthorizationError, InvalidArgumentError, RequestError, UserAuthenticationExpiredError } from '@nats-io/transport-node';
import { errorMessage } from '../IngestError.js';
import type { IngestError } from '../IngestError.js';

/** JetStream API error codes (server errors.json) that say "not now" rather than "never". */
const TRANSIENT_API_CODES = new Set([
  10008, // JSClusterNotAvailErr: no stream leader yet (an election)
  10074, // JSClusterNotLeaderErr
  10023, // JSInsufficientResourcesErr
  10077, // JSStreamStoreFailedF
  10164, // StreamWrongLastSequenceUnknown: the leader could not check yet
]);
export const WRONG_LAST_SEQUENCE = 10071;
export const STREAM_NOT_FOUND = 10059;

function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 5; current = current.cause) chain.push(current);
  return chain;
}

/** The JetStream API's refusal inside `error`, if it is one. */
export function apiErrorOf(error: unknown): JetStreamApiError | undefined {
  return causes(error).find((cause): cause is JetStreamApiError => cause instanceof JetStreamApiError);
}

/**
 * "No responders": nothing serves the subject. In a cluster only a stream's leader serves its
 * subjects, so this is a missing stream or one between leaders (an election after a node's loss).
 */
export function isNoResponders(error: unknown): boolean {
  return causes(error).some((cause) => (cause instanceof RequestError && cause.isNoResponders()) || cause.name === 'NoRespondersError');
}

/**
 * What a NATS failure during `doing` (e.g. "publishing to STREAMGATE.x") means to the ingest
 * core. Only a definite, permanent refusal is `jetstream_rejected`; a timeout, a lost connection,
 * a missing leader or anything unrecognised may have been applied or may pass later, and is
 * `jetstream_unavailable` (the writer reads its state again before the next write).
 */
export function natsIngestError(error: unknown, doing: string): IngestError {
  const message = `${doing}: ${errorMessage(error)}`;
  const api = apiErrorOf(error);
  if (api !== undefined) {
    if (TRANSIENT_API_CODES.has(api.code) || api.status === 503) {
      return { code: 'jetstream_unavailable', retryable: true, message: `JetStream cannot act now, ${message}` };
    }
    return { code: 'jetstream_rejected', retryable: false, message: `JetStream refused ${message}` };
  }
  if (isNoResponders(error)) {
    return {
      code: 'jetstream_unavailable',
      retryable: true,
      message: `no responders, ${message} (the JetStream stream is missing or has no leader now)`,
    };
  }
  // A refused login: nothing was sent, and only new credentials (a restart with them) help.
  if (causes(error).some((cause) => cause instanceof AuthorizationError || cause instanceof UserAuthenticationExpiredError)) {
    return { code: 'jetstream_rejected', retryable: false, message: `the NATS servers refused the login, ${message}; nothing was sent` };
  }
  // The client refuses before sending (a payload over the server's max_payload): never passes.
  if (causes(error).some((cause) => cause instanceof InvalidArgumentError)) {
    return { code: 'jetstream_rejected', retryable: false, message: `the NATS client refused ${message}` };
  }
  return { code: 'jetstream_unavailable', retryable: true, message: `${message}; the outcome is unknown` };
}
