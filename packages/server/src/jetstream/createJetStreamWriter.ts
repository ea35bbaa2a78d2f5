import { jetStreamSequence, streamNameSchema } from '@streamgate/protocol';
import type { StreamId, StreamRef } from '@streamgate/protocol';
import { encodePayload } from '../encodePayload.js';
import { entrySizeError } from '../entrySizeError.js';
import { parseIdempotencyKey } from '../parseIdempotencyKey.js';
import { idempotencyKeyError } from '../PublishError.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';
import { jetStreamConnectionSource } from './jetStreamConnectionSource.js';
import type { JetStreamConnectionOptions } from './jetStreamConnectionSource.js';
import { jetStreamSender } from './jetStreamSender.js';
import type { JetStreamPublishResult } from './jetStreamSender.js';

export type { JetStreamConnectionOptions, JetStreamCredentials } from './jetStreamConnectionSource.js';
export type { JetStreamPublishResult } from './jetStreamSender.js';

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
  const sender = jetStreamSender(jetStreamConnectionSource(options, timeoutMs));

  return {
    stream: sender.stream,
    async publish<T>(stream: StreamRef<T>, payload: T, publishOptions: JetStreamPublishOptions = {}): Promise<JetStreamPublishResult> {
      if (sender.isClosed) return failed({ code: 'closed', retryable: false, written: 'no', message: 'writer.close() was called' });
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
      let idempotencyKey: string | undefined;
      if (publishOptions.idempotencyKey !== undefined) {
        const key = parseIdempotencyKey(publishOptions.idempotencyKey);
        if (!key.ok) {
          return failed(idempotencyKeyError(key.reason));
        }
        idempotencyKey = key.key;
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
      return sender.send({ stream: name.data, data: data.text, idempotencyKey, expectedId, timeoutMs });
    },
    close: () => sender.close(),
  };
}
