import type { Redis } from 'ioredis';
import { encodeEntryFields, streamNameSchema } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import { idempotencyRecordKey } from './idempotencyRecordKey.js';
import { idempotentXadd } from './idempotentXadd.js';
import { parseIdempotencyKey } from './parseIdempotencyKey.js';
import { classifySentCommandError, errorText } from './PublishError.js';
import type { PublishError } from './PublishError.js';
import { PublisherConnection } from './PublisherConnection.js';
import { timeoutAfter } from './timeoutAfter.js';

export type { PublishError, PublishErrorCode, PublishWritten } from './PublishError.js';

/**
 * `id` is the Redis stream id of the entry, the position clients resume from. `duplicate` is true
 * when the idempotency key had already written an entry within the window: `id` is that entry's,
 * and nothing new was written.
 */
export type PublishResult = { ok: true; id: string; duplicate: boolean } | { ok: false; error: PublishError };

export type PublishOptions = {
  /**
   * At most one entry is written per (stream, key) within the publisher's idempotency window; a
   * repeat returns the first entry's id. 1–200 printable ASCII characters without space.
   */
  idempotencyKey?: string;
};

export type PublisherOptions = {
  /**
   * Where to publish. Publishers send on their own connection, opened with this client's options
   * and shared by every publisher made from this client (see PublisherConnection); nothing is sent
   * through the client itself. It closes when the last of those publishers is closed, or when
   * this client ends.
   */
  redis: Redis;
  /** Approximate cap on retained entries per stream (`XADD MAXLEN ~`); older entries are trimmed. */
  maxLen?: number;
  /** How long one publish may take, waiting for a connection included. Default 5 000 ms. */
  timeoutMs?: number;
  /** How long an idempotency key is remembered after its entry was written. Default 3 600 s. */
  idempotencyWindowSeconds?: number;
};

export interface Publisher {
  publish<T>(stream: StreamRef<T>, payload: T, options?: PublishOptions): Promise<PublishResult>;
  /** Later publishes answer `closed`; the last publisher of a client waits for publishes already sent, then closes the connection. */
  close(): Promise<void>;
}

const failed = (error: PublishError): PublishResult => ({ ok: false, error });

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * Writes payloads to streams in the entry format every relay reads. Never throws on a publish:
 * failures are typed results that say whether the entry may have been written (`written`). Retry
 * with the same idempotency key to be sure of exactly one entry.
 */
export function createPublisher({
  redis,
  maxLen = 10_000,
  timeoutMs = 5_000,
  idempotencyWindowSeconds = 3_600,
}: PublisherOptions): Publisher {
  const cap = positiveInteger('maxLen', maxLen);
  const deadlineMs = positiveInteger('timeoutMs', timeoutMs);
  const windowMs = positiveInteger('idempotencyWindowSeconds', idempotencyWindowSeconds) * 1_000;
  if (redis.options.keyPrefix) {
    // ioredis would prefix every key: entries would land where no relay reads (a stream's name
    // is its key, verbatim) and the record key could leave the stream's hash slot.
    throw new TypeError(`the publisher's Redis client must have no keyPrefix (got "${redis.options.keyPrefix}")`);
  }
  const connection = PublisherConnection.acquire(redis);
  let closed = false;

  async function send(command: (client: Redis) => Promise<PublishResult>): Promise<PublishResult> {
    if (closed) return failed({ code: 'closed', retryable: false, written: 'no', message: 'publisher.close() was called' });
    const startedAt = Date.now();
    const wait = await connection.ready(deadlineMs);
    if (!wait.ok) {
      if (wait.ended && connection.isClosed) return failed({ code: 'closed', retryable: false, written: 'no', message: wait.reason });
      return failed({ code: 'redis_unavailable', retryable: true, written: 'no', message: `${wait.reason}; nothing was sent` });
    }
    const timer = timeoutAfter(Math.max(1, deadlineMs - (Date.now() - startedAt)));
    try {
      // After a timeout the command's late outcome is dropped: the caller already holds
      // "timeout, maybe written", which that outcome cannot change.
      const outcome = await Promise.race([
        command(wait.redis).catch((error: unknown): PublishResult => {
          const classified = classifySentCommandError(error);
          if (!connection.isClosed || !classified.retryable) return failed(classified);
          return failed({ code: 'closed', retryable: false, written: 'unknown', message: `publisher closed: ${errorText(error)}` });
        }),
        timer.promise,
      ]);
      if (outcome !== 'timeout') return outcome;
      return failed({
        code: 'timeout',
        retryable: true,
        written: 'unknown',
        message: `no reply from redis within ${deadlineMs} ms; the entry may have been written`,
      });
    } finally {
      timer.clear();
    }
  }

  return {
    async publish<T>(stream: StreamRef<T>, payload: T, options: PublishOptions = {}): Promise<PublishResult> {
      const name = streamNameSchema.safeParse(stream.name);
      if (!name.success) {
        const message = name.error.issues[0]?.message ?? 'invalid';
        return failed({ code: 'stream_invalid', retryable: false, field: 'stream', message: `stream: ${message}` });
      }
      let value: unknown = payload;
      if (stream.schema !== undefined) {
        const parsed = stream.schema.safeParse(payload);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          const field = issue === undefined || issue.path.length === 0 ? 'payload' : `payload.${issue.path.join('.')}`;
          return failed({
            code: 'payload_invalid',
            retryable: false,
            field,
            message: `${field}: ${issue?.message ?? 'invalid'} (stream ${stream.name})`,
          });
        }
        value = parsed.data;
      }
      let data: string;
      try {
        data = encodeEntryFields(value)[1];
      } catch (error) {
        return failed({
          code: 'payload_invalid',
          retryable: false,
          field: 'payload',
          message: `payload: not JSON-serializable (${errorText(error)})`,
        });
      }

      if (options.idempotencyKey === undefined) {
        return send(async (client) => {
          const id = await client.xadd(name.data, 'MAXLEN', '~', cap, '*', 'data', data);
          if (id === null) return failed({ code: 'redis_rejected', retryable: false, written: 'no', message: 'XADD returned no id' });
          return { ok: true, id, duplicate: false };
        });
      }
      const key = parseIdempotencyKey(options.idempotencyKey);
      if (!key.ok) {
        return failed({
          code: 'idempotency_key_invalid',
          retryable: false,
          field: 'idempotencyKey',
          message: `idempotencyKey ${key.reason}`,
        });
      }
      const record = idempotencyRecordKey(name.data, key.key);
      if (!record.ok) return failed({ code: 'stream_invalid', retryable: false, field: 'stream', message: `stream ${record.reason}` });
      return send(async (client) => {
        const reply = await idempotentXadd(client, { stream: name.data, record: record.key, maxLen: cap, windowMs, data });
        if (!reply.ok) {
          return failed({
            code: 'redis_rejected',
            retryable: false,
            written: 'unknown',
            message: `unexpected script reply ${JSON.stringify(reply.reply)}`,
          });
        }
        return { ok: true, id: reply.id, duplicate: reply.duplicate };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await connection.release();
    },
  };
}
