import { streamNameSchema } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import type { RedisClient } from '@streamgate/redis';
import { idempotencyRecordKey } from './idempotencyRecordKey.js';
import { parseIdempotencyKey } from './parseIdempotencyKey.js';
import { classifySentCommandError, errorText, idempotencyKeyError } from './PublishError.js';
import type { PublishError } from './PublishError.js';
import { clientKeyPrefix } from './PublisherConnection.js';
import { normalizeTargetList, PublisherTargets } from './PublisherTargets.js';
import type { PublisherDestination } from './PublisherTargets.js';
import { timeoutAfter } from './timeoutAfter.js';
import { writeEntry } from './writeEntry.js';
import type { ReplicaWait } from '@streamgate/redis';
import type { EntryWrite, WriteOutcome } from './writeEntry.js';
import { encodePayload } from './encodePayload.js';
import { entrySizeError } from './entrySizeError.js';

export type { PublishError, PublishErrorCode, PublishWritten } from './PublishError.js';

/**
 * `id` is the Redis stream id of the entry, the position clients resume from. `duplicate` is true
 * when the idempotency key had already written an entry within the window: `id` is that entry's,
 * and nothing new was written.
 */
export type PublishResult = { ok: true; id: string; duplicate: boolean } | { ok: false; error: PublishError };

/**
 * Wait, after the write and on the same connection, until `count` replicas of the node that took
 * it acknowledged it, for at most `timeoutMs` (Redis `WAIT count timeoutMs`, pipelined behind the
 * XADD or the idempotent script). Fewer in time: the publish fails with `not_replicated` (the
 * entry is written; retry with the same idempotencyKey). This narrows the window in which a
 * primary's failover loses an acknowledged entry; it does not close it: replication stays
 * asynchronous (docs/protocol.md §11). `timeoutMs` must be below the publisher's `timeoutMs`.
 */
export type WaitForReplicas = { count: number; timeoutMs: number };

export type PublishOptions = {
  /**
   * At most one entry is written per (stream, key) within the publisher's idempotency window; a
   * repeat returns the first entry's id. 1–200 printable ASCII characters without space.
   */
  idempotencyKey?: string;
  /** Overrides the publisher's `waitForReplicas` for this publish; `false`: no wait. */
  waitForReplicas?: WaitForReplicas | false;
};

type CommonPublisherOptions = {
  /** Approximate cap on retained entries per stream (`XADD MAXLEN ~`); older entries are trimmed. */
  maxLen?: number;
  /** How long one publish may take, waiting for a connection (and for replicas) included. Default 5 000 ms. */
  timeoutMs?: number;
  /** How long an idempotency key is remembered after its entry was written. Default 3 600 s. */
  idempotencyWindowSeconds?: number;
  /** Wait for replicas after every publish (see WaitForReplicas); default: no wait. */
  waitForReplicas?: WaitForReplicas;
};

export type PublisherOptions = CommonPublisherOptions &
  (
    | {
        /**
         * Where to publish: an ioredis `Redis`, or a `Cluster`. Publishers send on their own
         * connection, opened with this client's options and shared by every publisher made from
         * this client (see PublisherConnection); nothing is sent through the client itself. It
         * closes when the last of those publishers is closed, or when this client ends.
         */
        redis: RedisClient;
        targets?: never;
      }
    | {
        /**
         * Where to publish, as target URLs (`redis://host:port/db`, `redis-cluster://seed:port`;
         * no credentials): one target, or the list of instances streams are spread over, each
         * stream written to `placeStream(stream, targets)` (docs/protocol.md §16). Give the same
         * list as the token issuer. The publisher opens one connection per target, on the first
         * publish there, and closes them on close().
         */
        targets: string | readonly string[];
        redis?: never;
        /** Credentials for every target (the URLs carry none). */
        username?: string;
        password?: string;
        /** CLIENT SETNAME of the publisher's connections; default `streamgate-publisher`. */
        connectionName?: string;
      }
  );

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

/** Why a wait cannot run under a publish deadline of `deadlineMs`, or null. */
function waitProblem(wait: WaitForReplicas, deadlineMs: number): string | null {
  if (!Number.isInteger(wait.count) || wait.count < 1) return `waitForReplicas.count must be a positive integer, got ${wait.count}`;
  // WAIT with timeout 0 blocks for ever; one at or past the deadline would end as `timeout`,
  // which says less (maybe written) than `not_replicated` (written, not confirmed).
  if (!Number.isInteger(wait.timeoutMs) || wait.timeoutMs < 1 || wait.timeoutMs >= deadlineMs) {
    return `waitForReplicas.timeoutMs must be a positive integer below the publisher's timeoutMs (${deadlineMs}), got ${wait.timeoutMs}`;
  }
  return null;
}

/**
 * Writes payloads to streams in the entry format every relay reads. Never throws on a publish:
 * failures are typed results that say whether the entry may have been written (`written`). Retry
 * with the same idempotency key to be sure of exactly one entry.
 */
export function createPublisher(options: PublisherOptions): Publisher {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('createPublisher needs an options object');
  const { maxLen = 10_000, timeoutMs = 5_000, idempotencyWindowSeconds = 3_600 } = options;
  const cap = positiveInteger('maxLen', maxLen);
  const deadlineMs = positiveInteger('timeoutMs', timeoutMs);
  const windowMs = positiveInteger('idempotencyWindowSeconds', idempotencyWindowSeconds) * 1_000;
  const defaultWait = options.waitForReplicas;
  const defaultWaitProblem = defaultWait === undefined ? null : waitProblem(defaultWait, deadlineMs);
  if (defaultWaitProblem !== null) throw new RangeError(defaultWaitProblem);
  const targets = new PublisherTargets(destinationOf(options));
  let closed = false;

  async function send(stream: string, write: EntryWrite, wait: ReplicaWait | undefined): Promise<PublishResult> {
    const connection = closed ? null : targets.connectionFor(stream);
    if (connection === null) return failed({ code: 'closed', retryable: false, written: 'no', message: 'publisher.close() was called' });
    const startedAt = Date.now();
    const ready = await connection.ready(deadlineMs);
    if (!ready.ok) {
      if (ready.ended && connection.isClosed) return failed({ code: 'closed', retryable: false, written: 'no', message: ready.reason });
      return failed({ code: 'redis_unavailable', retryable: true, written: 'no', message: `${ready.reason}; nothing was sent` });
    }
    const spent = Date.now() - startedAt;
    const timer = timeoutAfter(Math.max(1, deadlineMs - spent));
    // Waiting for the connection used part of the deadline: WAIT gets that much less, keeping the
    // gap the caller left before the deadline, so a short count answers not_replicated, not timeout.
    const capped = wait === undefined ? undefined : { count: wait.count, timeoutMs: Math.max(1, wait.timeoutMs - spent) };
    try {
      // After a timeout the command's late outcome is dropped: the caller already holds
      // "timeout, maybe written", which that outcome cannot change.
      const outcome = await Promise.race([
        writeEntry(ready.redis, write, capped).then(
          (written) => resultOf(written, capped),
          (error: unknown): PublishResult => {
            const classified = classifySentCommandError(error);
            if (!connection.isClosed || !classified.retryable) return failed(classified);
            return failed({ code: 'closed', retryable: false, written: 'unknown', message: `publisher closed: ${errorText(error)}` });
          },
        ),
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
    async publish<T>(stream: StreamRef<T>, payload: T, publishOptions: PublishOptions = {}): Promise<PublishResult> {
      // From plain JavaScript `stream` may be anything: `publish` never throws, so it is read here.
      const name = streamNameSchema.safeParse(
        typeof stream === 'object' && stream !== null ? (stream as { name?: unknown }).name : undefined,
      );
      if (!name.success) {
        const message = name.error.issues[0]?.message ?? 'invalid';
        return failed({ code: 'stream_invalid', retryable: false, field: 'stream', message: `stream: ${message}` });
      }
      const data = await encodePayload(stream, payload);
      if (!data.ok) return data;
      const tooLarge = entrySizeError(data.text);
      if (tooLarge !== null) return failed(tooLarge);
      const asked = publishOptions.waitForReplicas;
      const wait = asked === false ? undefined : (asked ?? defaultWait);
      const problem = wait === undefined ? null : waitProblem(wait, deadlineMs);
      if (problem !== null) return failed({ code: 'options_invalid', retryable: false, field: 'waitForReplicas', message: problem });

      if (publishOptions.idempotencyKey === undefined) {
        return send(name.data, { kind: 'xadd', stream: name.data, maxLen: cap, data: data.text }, wait);
      }
      const key = parseIdempotencyKey(publishOptions.idempotencyKey);
      if (!key.ok) {
        return failed(idempotencyKeyError(key.reason));
      }
      const record = idempotencyRecordKey(name.data, key.key);
      if (!record.ok) return failed({ code: 'stream_invalid', retryable: false, field: 'stream', message: `stream ${record.reason}` });
      const request = { stream: name.data, record: record.key, maxLen: cap, windowMs, data: data.text };
      return send(name.data, { kind: 'idempotent', request }, wait);
    },
    async close() {
      if (closed) return;
      closed = true;
      await targets.close();
    },
  };
}

function destinationOf(options: PublisherOptions): PublisherDestination {
  // From plain JavaScript: name what is wrong rather than fail reading a property of undefined.
  const given = options as { redis?: unknown; targets?: unknown };
  if ((given.redis === undefined) === (given.targets === undefined)) {
    throw new TypeError(
      `createPublisher needs exactly one of redis (an ioredis client) and targets (Redis URLs); got ${given.redis === undefined ? 'neither' : 'both'}`,
    );
  }
  if (options.targets === undefined) {
    const prefix = clientKeyPrefix(options.redis);
    if (prefix !== undefined) {
      // ioredis would prefix every key: entries would land where no relay reads (a stream's name
      // is its key, verbatim) and the record key could leave the stream's hash slot.
      throw new TypeError(`the publisher's Redis client must have no keyPrefix (got "${prefix}")`);
    }
    return { kind: 'client', client: options.redis };
  }
  const { username, password, connectionName } = options;
  return {
    kind: 'targets',
    targets: normalizeTargetList(options.targets),
    connection: {
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
      ...(connectionName === undefined ? {} : { connectionName }),
    },
  };
}

function resultOf(written: WriteOutcome, wait: ReplicaWait | undefined): PublishResult {
  if (!written.ok) {
    return failed({
      code: 'redis_rejected',
      retryable: false,
      written: 'unknown',
      message: `unexpected reply ${JSON.stringify(written.reply)}`,
    });
  }
  const replicas = written.replicas;
  if (wait !== undefined && replicas !== undefined && replicas < wait.count) {
    const why = written.waitError === undefined ? `within ${wait.timeoutMs} ms` : `(WAIT failed: ${written.waitError})`;
    return failed({
      code: 'not_replicated',
      retryable: true,
      written: 'unknown',
      id: written.id,
      duplicate: written.duplicate,
      replicas,
      wanted: wait.count,
      message: `entry ${written.id} written, but ${replicas} of the ${wait.count} replicas asked for acknowledged it ${why}; retry with the same idempotencyKey`,
    });
  }
  return { ok: true, id: written.id, duplicate: written.duplicate };
}
