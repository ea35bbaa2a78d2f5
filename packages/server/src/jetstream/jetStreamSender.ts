import type { JetStreamClient } from '@nats-io/jetstream';
import { jetStreamId, jetStreamSequence, jetStreamSubject } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { errorText } from '../PublishError.js';
import { timeoutAfter } from '../timeoutAfter.js';
import { classifyJetStreamPublishError } from './JetStreamPublishError.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';
import type { JetStreamConnectionSource } from './jetStreamConnectionSource.js';
import { storedWithMsgId } from './storedWithMsgId.js';
import { streamHoldingSubject } from './streamHoldingSubject.js';

type FencedError = Extract<JetStreamPublishError, { code: 'fenced' }>;
type MissingError = Extract<JetStreamPublishError, { code: 'jetstream_stream_missing' }>;

/**
 * `id` is `0-<stream sequence>` (jetStreamId), the position clients resume from, as a Redis id is.
 * `duplicate`: the idempotency key had already stored a message within the duplicate window;
 * `id` is that message's and nothing new was stored.
 */
export type JetStreamPublishResult = { ok: true; id: StreamId; duplicate: boolean } | { ok: false; error: JetStreamPublishError };

/** One message to store: the entry's encoded, size-checked `data` for task stream `stream`. */
export type JetStreamSend = {
  stream: StreamName;
  data: string;
  /** A checked idempotency key (parseIdempotencyKey), sent as `Nats-Msg-Id: <stream> <key>`. */
  idempotencyKey: string | undefined;
  /** A checked fence (`0-<sequence>`), sent as `Nats-Expected-Last-Subject-Sequence`; null: none. */
  expectedId: StreamId | null;
  /** The whole send's deadline, waiting for the connection included. */
  timeoutMs: number;
};

/**
 * The JetStream side of a publish, after its inputs were checked: shared by createJetStreamWriter
 * and createPublisher's JetStream targets, so both send the same message id, fence and error.
 */
export interface JetStreamSender {
  /** The JetStream stream written to. */
  readonly stream: string;
  readonly isClosed: boolean;
  /** Never rejects: a failure is a typed result saying whether the message may have been stored. */
  send(message: JetStreamSend): Promise<JetStreamPublishResult>;
  /** Later sends answer `closed`; an owned connection is drained (acks already due still arrive), then closed. */
  close(): Promise<void>;
}

const failed = (error: JetStreamPublishError): JetStreamPublishResult => ({ ok: false, error });

export function jetStreamSender(source: JetStreamConnectionSource): JetStreamSender {
  let closed = false;

  async function send(message: JetStreamSend): Promise<JetStreamPublishResult> {
    if (closed) return failed({ code: 'closed', retryable: false, written: 'no', message: 'close() was called; nothing was sent' });
    const { timeoutMs, expectedId } = message;
    const subject = jetStreamSubject(source.stream, message.stream);
    // A space is in neither a stream name nor a key: the pair maps to one message id. JetStream
    // dedupes per JetStream stream; the name scopes the key to the task, as the Redis record does.
    const msgID = message.idempotencyKey === undefined ? undefined : `${message.stream} ${message.idempotencyKey}`;
    const startedAt = Date.now();
    const ready = await source.client(timeoutMs);
    if (!ready.ok) return failed(ready.error);
    const remaining = Math.max(1, timeoutMs - (Date.now() - startedAt));
    const expectedSequence = expectedId === null ? null : jetStreamSequence(expectedId);
    try {
      const ack = await ready.js.publish(subject, message.data, {
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
    get isClosed() {
      return closed;
    },
    send,
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
