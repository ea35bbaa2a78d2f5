import { streamNameSchema } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import type { RedisClient } from '@streamgate/redis';
import { idempotencyRecordKey } from './idempotencyRecordKey.js';
import { parseIdempotencyKey } from './parseIdempotencyKey.js';
import { classifySentCommandError, errorText, idempotencyKeyError } from './PublishError.js';
import type { PublishError, PublishResult } from './PublishError.js';
import type { PublisherConnection } from './PublisherConnection.js';
import { PublisherTargets } from './PublisherTargets.js';
import { publisherDestination } from './publisherDestination.js';
import type { JetStreamWriterLoad } from './JetStreamTargetWriters.js';
import { timeoutAfter } from './timeoutAfter.js';
import { writeEntry } from './writeEntry.js';
import type { ReplicaWait } from '@streamgate/redis';
import type { EntryWrite, WriteOutcome } from './writeEntry.js';
import { encodePayload } from './encodePayload.js';
import { entrySizeError } from './entrySizeError.js';

export type { PublishError, PublishErrorCode, PublishResult, PublishWritten } from './PublishError.js';

/**
 * Wait, after the write and on the same connection, until `count` replicas of the node that took
 * it acknowledged it, for at most `timeoutMs` (Redis `WAIT count timeoutMs`, pipelined behind the
 * XADD or the idempotent script). Fewer in time: the publish fails with `not_replicated` (the
 * entry is written; retry with the same idempotencyKey). This narrows the window in which a
 * primary's failover loses an acknowledged entry; it does not close it: replication stays
 * asynchronous (docs/protocol.md §11). `timeoutMs` must be below the publisher's `timeoutMs`.
 *
 * On a JetStream target it is checked the same way and then already met: JetStream acknowledges
 * a publish only once a quorum of the stream's replicas stored it (R3: two of three), so an
 * acknowledged entry survives the loss of any one node, which WAIT only makes likelier. `count`
 * is not compared with the stream's replicas: the stream's config decides them.
 */
export type WaitForReplicas = { count: number; timeoutMs: number };

export type PublishOptions = {
  /**
   * At most one entry is written per (stream, key) within the idempotency window (the publisher's
   * `idempotencyWindowSeconds`; on a JetStream target the JetStream stream's `duplicate_window`);
   * a repeat returns the first entry's id with `duplicate: true`. 1–200 printable ASCII characters
   * without space. Sent to JetStream as `Nats-Msg-Id: <stream name> <key>`.
   */
  idempotencyKey?: string;
  /** Overrides the publisher's `waitForReplicas` for this publish; `false`: no wait. */
  waitForReplicas?: WaitForReplicas | false;
};

type CommonPublisherOptions = {
  /**
   * Approximate cap on retained entries per stream (`XADD MAXLEN ~`); older entries are trimmed.
   * Redis targets only: a JetStream stream's retention is its own config (`max_msgs_per_subject`,
   * ensureJetStream's `maxMsgsPerSubject`), so given with JetStream targets alone it is a TypeError.
   */
  maxLen?: number;
  /** How long one publish may take, waiting for a connection (and for replicas) included. Default 5 000 ms. */
  timeoutMs?: number;
  /**
   * How long an idempotency key is remembered after its entry was written. Default 3 600 s. Redis
   * targets only: on a JetStream target the window is the stream's `duplicate_window` (ensureJetStream's
   * `duplicateWindowMs`, default 2 minutes), so given with JetStream targets alone it is a TypeError.
   */
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
        natsUsername?: never;
        natsPassword?: never;
      }
    | {
        /**
         * Where to publish, as target URLs without credentials: Redis (`redis://host:port/db`,
         * `redis-cluster://seed:port`) or NATS JetStream (`nats://seed:port,seed:port/STREAM`,
         * `tls://…`; docs/protocol.md §17). One target, or the list streams are spread over, each
         * stream written to `placeStream(stream, targets)` (docs/protocol.md §16), the list mixing
         * both kinds if need be. Give the same list as the token issuer. The publisher opens one
         * connection per target, on the first publish there (the NATS client is loaded then, so a
         * publisher that never writes to JetStream never loads it), and closes them on close().
         */
        targets: string | readonly string[];
        redis?: never;
        /** Credentials for every Redis target (the URLs carry none). */
        username?: string;
        password?: string;
        /** Credentials for every JetStream target, both or neither (the URLs carry none). */
        natsUsername?: string;
        natsPassword?: string;
        /** CLIENT SETNAME of the publisher's Redis connections, and its NATS connections' name; default `streamgate-publisher`. */
        connectionName?: string;
      }
  );

export interface Publisher {
  publish<T>(stream: StreamRef<T>, payload: T, options?: PublishOptions): Promise<PublishResult>;
  /**
   * Later publishes answer `closed`; the last publisher of a client waits for publishes already
   * sent, then closes the connection. NATS connections are drained (acks already due still
   * arrive), then closed.
   */
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
 * Writes payloads to streams in the entry format every relay reads, to Redis or to NATS JetStream
 * (docs/protocol.md §17) as the stream's target says. Never throws on a publish: failures are
 * typed results that say whether the entry may have been written (`written`). Retry with the same
 * idempotency key to be sure of exactly one entry.
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
  const targets = new PublisherTargets(publisherDestination(options, deadlineMs));
  let closed = false;

  async function send(connection: PublisherConnection, write: EntryWrite, wait: ReplicaWait | undefined): Promise<PublishResult> {
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

  /** The JetStream target's writer stores it (jetstream/openJetStreamTargetWriter.ts); waitForReplicas is met by its ack. */
  async function sendToJetStream(
    writer: Promise<JetStreamWriterLoad>,
    stream: string,
    data: string,
    key: string | undefined,
  ): Promise<PublishResult> {
    const startedAt = Date.now();
    // The first publish to the target waits here for the NATS client's import too: part of its deadline.
    const loaded = await writer;
    if (!loaded.ok) return failed(loaded.error);
    return loaded.writer.write(stream, data, key, Math.max(1, deadlineMs - (Date.now() - startedAt)));
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
      // Checked on every target alike: whether a publish's options are valid must not depend on
      // where placement put its stream.
      const problem = wait === undefined ? null : waitProblem(wait, deadlineMs);
      if (problem !== null) return failed({ code: 'options_invalid', retryable: false, field: 'waitForReplicas', message: problem });
      let key: string | undefined;
      if (publishOptions.idempotencyKey !== undefined) {
        const parsed = parseIdempotencyKey(publishOptions.idempotencyKey);
        if (!parsed.ok) return failed(idempotencyKeyError(parsed.reason));
        key = parsed.key;
      }

      const route = closed ? null : targets.routeFor(name.data);
      if (route === null) return failed({ code: 'closed', retryable: false, written: 'no', message: 'publisher.close() was called' });
      // waitForReplicas is met by JetStream's ack (see WaitForReplicas), not refused: placement
      // picks a stream's log, so a caller asking for it on every publish over a list mixing Redis
      // and JetStream would otherwise see a hash-chosen share of them fail, for asking what the
      // ack already gives.
      if (route.kind === 'jetstream') return sendToJetStream(route.writer, name.data, data.text, key);
      if (key === undefined) {
        return send(route.connection, { kind: 'xadd', stream: name.data, maxLen: cap, data: data.text }, wait);
      }
      const record = idempotencyRecordKey(name.data, key);
      if (!record.ok) return failed({ code: 'stream_invalid', retryable: false, field: 'stream', message: `stream ${record.reason}` });
      const request = { stream: name.data, record: record.key, maxLen: cap, windowMs, data: data.text };
      return send(route.connection, { kind: 'idempotent', request }, wait);
    },
    async close() {
      if (closed) return;
      closed = true;
      await targets.close();
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
