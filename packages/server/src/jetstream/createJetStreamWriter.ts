import type { JetStreamClient } from '@nats-io/jetstream';
import { jetStreamId, jetStreamSequence, jetStreamSubject, streamNameSchema } from '@streamgate/protocol';
import type { StreamId, StreamRef } from '@streamgate/protocol';
import { encodePayload } from '../encodePayload.js';
import { entrySizeError } from '../entrySizeError.js';
import { parseIdempotencyKey } from '../parseIdempotencyKey.js';
import { errorText, idempotencyKeyError } from '../PublishError.js';
import { timeoutAfter } from '../timeoutAfter.js';
import { classifyJetStreamPublishError } from './JetStreamPublishError.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';
import { jetStreamConnectionSource } from './jetStreamConnectionSource.js';
import type { JetStreamConnectionOptions } from './jetStreamConnectionSource.js';
import { storedWithMsgId } from './storedWithMsgId.js';
import { streamHoldingSubject } from './streamHoldingSubject.js';

export type { JetStreamConnectionOptions, JetStreamCredentials } from './jetStreamConnectionSource.js';

type FencedError = Extract<JetStreamPublishError, { code: 'fenced' }>;
type MissingError = Extract<JetStreamPublishError, { code: 'jetstream_stream_missing' }>;

/**
 * `id` is `0-<stream sequence>` (jetStreamId), the position clients resume from, as a Redis id is.
 * `duplicate`: the idempotency key had already stored a message within the duplicate window;
 * `id` is that message's and nothing new was stored.
 */
export type JetStreamPublishResult = { ok: true; id: StreamId; duplicate: boolean } | { ok: false; error: JetStreamPublishError };

export type JetStreamPublishOptions = {
  /**
   * At most one entry is stored per (task stream, key) within the JetStream stream's
   * `duplicate_window` (default 2 minutes; ensureJetStream's `duplicateWindowMs`); a repeat
   * returns the first entry's id with `duplicate: true`. Sent as `Nats-Msg-Id: <stream name> <key>`
   * (JetStream dedupes per JetStream stream, the name scopes the key to the task as
   * createPublisher's Redis record does). The window is the stream's and far shorter than
   * createPublisher's hour: a retry after it can store the entry twice. 1–200 printable ASCII
   * characters without space.
   */
  idempotencyKey?: string;
  /**
   * Fencing for a single writer per task: store only if this is the task stream's last entry
   * (`0-0`: the task has none yet), sent as `Nats-Expected-Last-Subject-Sequence`. Otherwise
   * nothing is stored and the publish fails with `fenced`. A retry carrying the same
   * idempotencyKey answers `duplicate` (not `fenced`) when its first attempt is the task's last
   * entry: a clustered JetStream checks the fence before its duplicate window, so the writer reads
   * that entry's `Nats-Msg-Id` to tell the two apart.
   */
  expectLastId?: StreamId;
};

export type JetStreamWriterOptions = {
  /** How long one publish may take, waiting for a connection included. Default 5 000 ms. */
  timeoutMs?: number;
} & JetStreamConnectionOptions;

export interface JetStreamWriter {
  /** The JetStream stream written to. */
  readonly stream: string;
  /** Never throws: failures are typed results saying whether the message may have been stored. */
  publish<T>(stream: StreamRef<T>, payload: T, options?: JetStreamPublishOptions): Promise<JetStreamPublishResult>;
  /** Later publishes answer `closed`; an owned connection is drained (acks already due still arrive), then closed. */
  close(): Promise<void>;
}

const failed = (error: JetStreamPublishError): JetStreamPublishResult => ({ ok: false, error });

/**
 * Writes entries to per-task subjects of a JetStream stream, `<STREAM>.<name>` (jetStreamSubject),
 * with the payload encoded and size-checked exactly as createPublisher writes a Redis entry's
 * `data`. Every publish waits for JetStream's ack, which comes once the stream's replicas have
 * stored the message (an R3 stream: two of three), so an acknowledged entry survives the loss
 * of the leader. After `timeout` or a retryable error, retry with the same idempotencyKey.
 */
export function createJetStreamWriter(options: JetStreamWriterOptions): JetStreamWriter {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('createJetStreamWriter needs an options object');
  const { timeoutMs = 5_000 } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);
  const source = jetStreamConnectionSource(options, timeoutMs);
  let closed = false;

  async function send(
    subject: string,
    data: string,
    msgID: string | undefined,
    expectedId: StreamId | null,
  ): Promise<JetStreamPublishResult> {
    const startedAt = Date.now();
    const ready = await source.client(timeoutMs);
    if (!ready.ok) return failed(ready.error);
    const remaining = Math.max(1, timeoutMs - (Date.now() - startedAt));
    const expectedSequence = expectedId === null ? null : jetStreamSequence(expectedId);
    try {
      const ack = await ready.js.publish(subject, data, {
        timeout: remaining,
        // One attempt: a retry belongs to the caller, who holds the idempotency key.
        retries: 1,
        ...(msgID === undefined ? {} : { msgID }),
        // streamName: a subject that another stream captures is refused, not stored where no relay reads.
        expect: {
          streamName: source.stream,
          ...(expectedSequence === null ? {} : { lastSubjectSequence: expectedSequence }),
        },
      });
      return { ok: true, id: jetStreamId(ack.seq), duplicate: ack.duplicate };
    } catch (error) {
      if (closed) return failed({ code: 'closed', retryable: false, written: 'unknown', message: `writer closed: ${errorText(error)}` });
      const refused = classifyJetStreamPublishError(error, { jetStream: source.stream, subject, expectedId });
      const left = Math.max(1, timeoutMs - (Date.now() - startedAt));
      if (refused.code === 'jetstream_stream_missing') return leaderlessOrMissing(ready.js, refused, left);
      if (refused.code !== 'fenced' || msgID === undefined || refused.lastId === null) return failed(refused);
      return ownFencedWrite(ready.js, refused, msgID, left);
    }
  }

  /** "No responders" is a missing stream, or one between leaders: only the meta leader knows which. */
  async function leaderlessOrMissing(js: JetStreamClient, refused: MissingError, remainingMs: number): Promise<JetStreamPublishResult> {
    let holder: string | null;
    try {
      holder = await within(streamHoldingSubject(js, refused.subject), remainingMs);
    } catch (error) {
      return failed({
        code: 'jetstream_unavailable',
        retryable: true,
        written: 'no',
        message: `no responders for ${refused.subject}, and JetStream did not say whether a stream holds it (${errorText(error)}); nothing was stored`,
      });
    }
    if (holder === null) return failed(refused);
    return failed({
      code: 'jetstream_unavailable',
      retryable: true,
      written: 'no',
      message: `JetStream stream ${holder} holds ${refused.subject} but has no leader now (an election after a node's loss); nothing was stored`,
    });
  }

  /** A `fenced` retry is the caller's own stored write when the subject's last entry carries its key. */
  async function ownFencedWrite(
    js: JetStreamClient,
    refused: FencedError,
    msgID: string,
    remainingMs: number,
  ): Promise<JetStreamPublishResult> {
    const lastId = refused.lastId ?? '0-0';
    const lastSequence = jetStreamSequence(lastId) ?? 0;
    // The task has no entry at all: certainly not one an earlier attempt stored.
    if (lastSequence === 0) return failed(refused);
    try {
      const own = await within(storedWithMsgId(js, source.stream, lastSequence, msgID), remainingMs);
      return own ? { ok: true, id: lastId, duplicate: true } : failed(refused);
    } catch (error) {
      // Refused, but possibly because an earlier attempt of this publish was stored: unknown until read.
      return failed({
        code: 'jetstream_unavailable',
        retryable: true,
        written: 'unknown',
        message: `${refused.message}; whether ${lastId} is this publish's earlier attempt could not be read (${errorText(error)}); retry with the same idempotencyKey`,
      });
    }
  }

  return {
    stream: source.stream,
    async publish<T>(stream: StreamRef<T>, payload: T, publishOptions: JetStreamPublishOptions = {}): Promise<JetStreamPublishResult> {
      if (closed) return failed({ code: 'closed', retryable: false, written: 'no', message: 'writer.close() was called' });
      // From plain JavaScript `stream` may be anything: `publish` never throws, so it is read here.
      const name = streamNameSchema.safeParse(
        typeof stream === 'object' && stream !== null ? (stream as { name?: unknown }).name : undefined,
      );
      if (!name.success) {
        return failed({
          code: 'stream_invalid',
          retryable: false,
          field: 'stream',
          message: `stream: ${name.error.issues[0]?.message ?? 'invalid'}`,
        });
      }
      const data = await encodePayload(stream, payload);
      if (!data.ok) return data;
      const tooLarge = entrySizeError(data.text);
      if (tooLarge !== null) return failed(tooLarge);
      let msgID: string | undefined;
      if (publishOptions.idempotencyKey !== undefined) {
        const key = parseIdempotencyKey(publishOptions.idempotencyKey);
        if (!key.ok) {
          return failed(idempotencyKeyError(key.reason));
        }
        // A space is in neither a stream name nor a key: the pair maps to one message id.
        msgID = `${name.data} ${key.key}`;
      }
      const expectedId = publishOptions.expectLastId ?? null;
      if (expectedId !== null && (typeof expectedId !== 'string' || jetStreamSequence(expectedId) === null)) {
        return failed({
          code: 'options_invalid',
          retryable: false,
          field: 'expectLastId',
          message: `expectLastId must be a JetStream id 0-<sequence> (0-0: no entry yet), got ${JSON.stringify(expectedId)}`,
        });
      }
      return send(jetStreamSubject(source.stream, name.data), data.text, msgID, expectedId);
    },
    async close() {
      if (closed) return;
      closed = true;
      await source.close();
    },
  };
}

/** `promise`'s value, or a rejection once `ms` have passed: a follow-up request keeps to the publish's deadline. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  const timer = timeoutAfter(ms);
  try {
    // Settled either way, so a late rejection after the deadline is not left unhandled.
    const settled = promise.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const outcome = await Promise.race([settled, timer.promise]);
    if (outcome === 'timeout') throw new Error(`no answer within ${ms} ms`);
    if (!outcome.ok) throw outcome.error instanceof Error ? outcome.error : new Error(errorText(outcome.error));
    return outcome.value;
  } finally {
    timer.clear();
  }
}
