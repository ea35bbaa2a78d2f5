import type { Redis } from 'ioredis';
import { encodeEntryFields } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';

export type PublishErrorCode = 'payload_invalid' | 'redis_unavailable' | 'redis_rejected';

export type PublishError = { code: PublishErrorCode; retryable: boolean; message: string };

/** `id` is the Redis stream id of the new entry, the position clients resume from. */
export type PublishResult = { ok: true; id: string } | { ok: false; error: PublishError };

export type PublisherOptions = {
  redis: Redis;
  /** Approximate cap on retained entries per stream (`XADD MAXLEN ~`); older entries are trimmed. */
  maxLen?: number;
};

export interface Publisher {
  publish<T>(stream: StreamRef<T>, payload: T): Promise<PublishResult>;
}

// Replies meaning "the server cannot take writes right now" rather than "this write is wrong".
const TRANSIENT_REPLY = /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|READONLY|CLUSTERDOWN|OOM)\b/;

const payloadInvalid = (message: string): PublishResult => ({
  ok: false,
  error: { code: 'payload_invalid', retryable: false, message },
});

function classifyRedisError(error: unknown): PublishError {
  const message = error instanceof Error ? error.message : String(error);
  // ioredis marks server replies with name "ReplyError"; anything else is the connection.
  const isReply = error instanceof Error && error.name === 'ReplyError';
  if (isReply && !TRANSIENT_REPLY.test(message)) {
    return { code: 'redis_rejected', retryable: false, message: `redis refused the entry: ${message}` };
  }
  return { code: 'redis_unavailable', retryable: true, message: `redis unavailable: ${message}` };
}

/**
 * Writes payloads to streams in the entry format every relay reads. Never throws: failures are
 * typed results. A `redis_unavailable` result does not prove the entry was not written (the
 * connection may have dropped after the server applied it), so consumers must tolerate a repeat.
 */
export function createPublisher({ redis, maxLen = 10_000 }: PublisherOptions): Publisher {
  if (!Number.isInteger(maxLen) || maxLen < 1) throw new RangeError(`maxLen must be a positive integer, got ${maxLen}`);
  const cap = String(maxLen);

  return {
    async publish<T>(stream: StreamRef<T>, payload: T): Promise<PublishResult> {
      let value: unknown = payload;
      if (stream.schema !== undefined) {
        const parsed = stream.schema.safeParse(payload);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          const field = issue === undefined || issue.path.length === 0 ? 'payload' : `payload.${issue.path.join('.')}`;
          return payloadInvalid(`${field}: ${issue?.message ?? 'invalid'} (stream ${stream.name})`);
        }
        value = parsed.data;
      }
      let fields: [string, string];
      try {
        fields = encodeEntryFields(value);
      } catch (error) {
        return payloadInvalid(`payload: not JSON-serializable (${error instanceof Error ? error.message : String(error)})`);
      }
      try {
        const id = await redis.xadd(stream.name, 'MAXLEN', '~', cap, '*', ...fields);
        if (id === null) return { ok: false, error: { code: 'redis_rejected', retryable: false, message: 'XADD returned no id' } };
        return { ok: true, id };
      } catch (error) {
        return { ok: false, error: classifyRedisError(error) };
      }
    },
  };
}
