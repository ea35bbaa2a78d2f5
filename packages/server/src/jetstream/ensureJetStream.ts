import { JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { ClosedConnectionError, nanos, TimeoutError } from '@nats-io/transport-node';
import type { JetStreamTargetAddress } from '@streamgate/protocol';
import { errorText } from '../PublishError.js';
import { hasCause, isNoResponders } from './errorCauses.js';
import { jetStreamRepublish } from '@streamgate/protocol';
import { isTransientJetStreamApiError } from './JetStreamPublishError.js';

export type EnsureJetStreamOptions = {
  /** Replicas of every message; default 3 (an acknowledged write survives one node's loss). */
  replicas?: number;
  /** Keep at most this many messages per task subject (older ones are dropped); default unlimited. */
  maxMsgsPerSubject?: number;
  /** Drop messages older than this; default never. */
  maxAgeMs?: number;
  /**
   * How long JetStream remembers an idempotency key (`Nats-Msg-Id`); default the server's, 2
   * minutes. Longer costs memory per message on every replica. At most `maxAgeMs`.
   */
  duplicateWindowMs?: number;
};

export type EnsureJetStreamError =
  /**
   * The stream exists, but its `field` (a JetStream config field, e.g. `num_replicas`) is `actual`
   * where the relay needs `wanted`. Nothing was changed: editing a live stream is an operator's
   * decision (replicas move data; storage cannot change at all).
   */
  | { code: 'jetstream_stream_conflict'; retryable: false; stream: string; field: string; wanted: string; actual: string; message: string }
  /** No JetStream answer in time, or the cluster cannot act now (no meta leader, a peer missing). */
  | { code: 'jetstream_unavailable'; retryable: true; message: string }
  /** JetStream refused the stream (subjects that overlap another stream, too few servers, no JetStream). */
  | { code: 'jetstream_rejected'; retryable: false; status: number | null; errCode: number | null; message: string };

/**
 * `created`: this call's add made the stream (JetStream accepts an identical add of an existing
 * stream, so two processes starting together may both say so); `info` as JetStream reported it.
 */
export type EnsureJetStreamResult = { ok: true; created: boolean; info: StreamInfo } | { ok: false; error: EnsureJetStreamError };

const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;

/**
 * Creates the JetStream stream `address.stream` as writers and relays need it, or checks that the
 * existing one is so: subjects `<STREAM>.*` (one per task, jetStreamSubject), file storage,
 * `replicas`, limits retention, acks on, every stored message republished to
 * `$SG.live.<STREAM>.>` (jetStreamLiveSubject; relays subscribe there), and the optional limits
 * when given. A limit not given is not checked. Safe to call from every process at start: the
 * same config again is accepted, a concurrent creation is read back and checked.
 */
export async function ensureJetStream(
  jsm: JetStreamManager,
  address: Pick<JetStreamTargetAddress, 'stream'>,
  options: EnsureJetStreamOptions = {},
): Promise<EnsureJetStreamResult> {
  const wanted = wantedConfig(address.stream, options);
  try {
    const existing = await infoOrNull(jsm, address.stream);
    if (existing !== null) return checked(existing, wanted);
    try {
      return { ok: true, created: true, info: await jsm.streams.add(wanted) };
    } catch (error) {
      // Another process created it between our look and our add, with a config that differs: the
      // meta leader answers "name in use", or (nats-server 2.9, while the first assignment is in
      // flight) nothing at all. A timeout may also hide our own add, applied. Look again.
      const nameInUse = error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE;
      if (!nameInUse && !hasCause(error, TimeoutError)) throw error;
      const raced = await infoOrNull(jsm, address.stream);
      if (raced === null) throw error;
      return checked(raced, wanted);
    }
  } catch (error) {
    return { ok: false, error: classify(error, address.stream) };
  }
}

async function infoOrNull(jsm: JetStreamManager, stream: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(stream);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === STREAM_NOT_FOUND) return null;
    throw error;
  }
}

function positiveInteger(name: string, value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isInteger(value) || value < 1))
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

type WantedConfig = Partial<StreamConfig> & Pick<StreamConfig, 'name' | 'subjects' | 'num_replicas' | 'storage' | 'retention'>;

function wantedConfig(stream: string, options: EnsureJetStreamOptions): WantedConfig {
  const replicas = positiveInteger('replicas', options.replicas ?? 3) ?? 3;
  if (replicas > 5) throw new RangeError(`replicas must be at most 5 (JetStream's limit), got ${replicas}`);
  const maxMsgsPerSubject = positiveInteger('maxMsgsPerSubject', options.maxMsgsPerSubject);
  const maxAgeMs = positiveInteger('maxAgeMs', options.maxAgeMs);
  const duplicateWindowMs = positiveInteger('duplicateWindowMs', options.duplicateWindowMs);
  if (maxAgeMs !== undefined && duplicateWindowMs !== undefined && duplicateWindowMs > maxAgeMs) {
    // JetStream refuses it too, but less clearly.
    throw new RangeError(`duplicateWindowMs (${duplicateWindowMs}) must not exceed maxAgeMs (${maxAgeMs})`);
  }
  return {
    name: stream,
    subjects: [`${stream}.*`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
    republish: jetStreamRepublish(stream),
    ...(maxMsgsPerSubject === undefined ? {} : { max_msgs_per_subject: maxMsgsPerSubject }),
    ...(maxAgeMs === undefined ? {} : { max_age: nanos(maxAgeMs) }),
    ...(duplicateWindowMs === undefined ? {} : { duplicate_window: nanos(duplicateWindowMs) }),
  };
}

function checked(info: StreamInfo, wanted: WantedConfig): EnsureJetStreamResult {
  const actual = info.config;
  const republish = wanted.republish;
  // [field, what the relay needs, what the stream has]; the first that differs is reported.
  const fields: Array<[string, unknown, unknown]> = [
    ['subjects', wanted.subjects, actual.subjects ?? []],
    ['retention', wanted.retention, actual.retention],
    ['storage', wanted.storage, actual.storage],
    ['num_replicas', wanted.num_replicas, actual.num_replicas],
    ['no_ack', false, actual.no_ack ?? false],
    ['republish.src', republish?.src, actual.republish?.src],
    ['republish.dest', republish?.dest, actual.republish?.dest],
    // Headers only: relays would receive entries without their data.
    ['republish.headers_only', false, actual.republish?.headers_only ?? false],
  ];
  if (wanted.max_msgs_per_subject !== undefined)
    fields.push(['max_msgs_per_subject', wanted.max_msgs_per_subject, actual.max_msgs_per_subject]);
  if (wanted.max_age !== undefined) fields.push(['max_age', wanted.max_age, actual.max_age]);
  if (wanted.duplicate_window !== undefined) fields.push(['duplicate_window', wanted.duplicate_window, actual.duplicate_window]);
  for (const [field, want, have] of fields) {
    const wantText = JSON.stringify(want) ?? 'unset';
    const haveText = JSON.stringify(have) ?? 'unset';
    if (wantText === haveText) continue;
    return {
      ok: false,
      error: {
        code: 'jetstream_stream_conflict',
        retryable: false,
        stream: wanted.name,
        field,
        wanted: wantText,
        actual: haveText,
        message: `JetStream stream ${wanted.name} exists with ${field} ${haveText}, but streamgate needs ${wantText}; it was not changed: edit the stream (or the options) deliberately`,
      },
    };
  }
  return { ok: true, created: false, info };
}

function classify(error: unknown, stream: string): EnsureJetStreamError {
  const message = `JetStream stream ${stream}: ${errorText(error)}`;
  if (error instanceof JetStreamApiError) {
    if (isTransientJetStreamApiError(error)) return { code: 'jetstream_unavailable', retryable: true, message };
    return { code: 'jetstream_rejected', retryable: false, status: error.status, errCode: error.code, message };
  }
  // No responders on the API: this account or cluster has no JetStream; waiting will not add it.
  if (isNoResponders(error) || hasCause(error, ClosedConnectionError))
    return { code: 'jetstream_rejected', retryable: false, status: null, errCode: null, message };
  // A timeout, a connection lost under the request: the cluster may answer on the next try.
  return { code: 'jetstream_unavailable', retryable: true, message };
}
