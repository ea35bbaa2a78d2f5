import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamSubject, streamNameSchema } from '@streamgate/protocol';
import type { CoreLog } from '../CoreLog.js';
import { errorMessage, IngestFailure } from '../IngestError.js';
import type { IngestError } from '../IngestError.js';
import type { Fence, StreamWriter, WriteBatch, WriteOutcome } from '../StreamWriter.js';
import { ingestMsgId } from './ingestMsgId.js';
import { connectIngestTarget } from './IngestTarget.js';
import type { IngestTarget } from './IngestTarget.js';
import { fencedError, KeySession } from './KeySession.js';
import { natsIngestError } from './natsIngestError.js';
import { ForeignRecordError } from './stateRecords.js';
import type { StepBody, StepEntry } from './stateRecords.js';

/*
 * INVARIANT: every message ingest stores on a stream's subject belongs to a step its key's state
 * log committed, in the order the steps were committed, and no dedupe id is stored twice across
 * owners; one owner's own replay is skipped within the stream's duplicate_window (default 2 min),
 * as on Redis within INGEST_DEDUPE_TTL_MS. (Leases stay in Redis: they need a per-key TTL, which
 * nats-server 2.9's KV lacks, and ingest coordinates through Redis anyway. The fence is enforced
 * here, in JetStream.)
 *
 * A key's state log (IngestStateLog, a subject of `<STREAM>_INGEST`) is a write-ahead log:
 * - Appends carry Nats-Expected-Last-Subject-Sequence, so one owner's appends never interleave
 *   with another's, and the first append after someone else's fails. Tokens along a log never
 *   decrease: an owner appends only while the log's last token is at most its own.
 * - An owner claims the key before anything else (loadState, or its first write): it folds the
 *   log into the state, appends a claim record, then finishes the newest step that carried
 *   entries, whose owner may have died or frozen half-way: it reads the Nats-Msg-Id of every
 *   message after that step's starting sequence and publishes the step's entries not among them.
 *   From the claim on, an older owner can append nothing (its next append fails, and the log's
 *   last token, newer than its own, says `fenced`).
 * - A write step appends its record (entries, state changes, and the subject's sequence when the
 *   step began) before publishing a single entry. The record is the commit: its state counts
 *   whether or not its entries are all published, because whoever holds the key next publishes
 *   the rest.
 * - Every entry is published with Nats-Msg-Id `<stream> <dedupeId>` and the subject's last
 *   sequence as this owner knows it. A "wrong last sequence" answer means someone else stored a
 *   message: the owner reads the ids stored since, checks the log (a newer token: `fenced`), and
 *   publishes the entry only if its id is not among them. An ack marked duplicate (JetStream's own
 *   duplicate window) counts as a duplicate.
 * So a stale owner's publish lands only while the new owner has published nothing since the
 * stale owner last looked, and then it is an entry of a committed step (the new owner's redo
 * list), which the new owner skips by its id. A stale owner never stores an entry that no
 * committed step holds, so a successor's view of what was written (its state) is always right,
 * reorgs included. Two owners holding the same token (a Redis failover that lost a lease grant)
 * pass each other's fence, as they do on Redis; every publish still expects the subject's last
 * sequence and skips an id found stored since, so an entry both offer is stored once.
 *
 * Every NATS failure is an IngestError: `jetstream_unavailable` (retryable: no answer, no leader,
 * a lost connection; the outcome may be unknown, so the key's session is dropped and the next
 * write claims again, redoing what is unfinished), `jetstream_rejected` (JetStream or the client
 * refused for good), `fenced`, `stream_invalid` (a key that is no stream name).
 */

export interface JetStreamStreamWriterOptions {
  /**
   * A NATS connection, or one being opened (until it is, each call waits for it up to timeoutMs,
   * then answers `jetstream_unavailable`). The writer never closes it.
   */
  readonly connection: NatsConnection | Promise<NatsConnection>;
  /** The JetStream stream holding the per-task subjects (docs/protocol.md §17), e.g. STREAMGATE. */
  readonly jetStream: string;
  /** How long one JetStream request may take. Default 5 000 ms. */
  readonly timeoutMs?: number;
  /** Step records in a state log before it is compacted into a snapshot. Default 64. */
  readonly snapshotEvery?: number;
  /** Compactions that failed (the step itself had succeeded) are logged here. */
  readonly log?: CoreLog;
}

type Ready = { ok: true; target: IngestTarget } | { ok: false; error: IngestError };
type Opened = { ok: true; session: KeySession } | { ok: false; error: IngestError };

/** Claims that find the log moved between their read and their append before giving up for now. */
const MAX_CLAIM_ATTEMPTS = 5;

export class JetStreamStreamWriter implements StreamWriter {
  private readonly sessions = new Map<string, KeySession>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly timeoutMs: number;
  private readonly snapshotEvery: number;
  private target: Promise<Ready> | undefined;

  constructor(private readonly options: JetStreamStreamWriterOptions) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.snapshotEvery = options.snapshotEvery ?? 64;
    if (!Number.isInteger(this.timeoutMs) || this.timeoutMs < 1)
      throw new RangeError(`timeoutMs must be a positive integer, got ${this.timeoutMs}`);
    if (!Number.isInteger(this.snapshotEvery) || this.snapshotEvery < 1)
      throw new RangeError(`snapshotEvery must be a positive integer, got ${this.snapshotEvery}`);
  }

  write(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    const invalid = invalidKey(fence.key);
    if (invalid !== null) return Promise.resolve({ ok: false, error: invalid });
    return this.exclusive(fence.key, async () => {
      const outcome = await this.step(fence, batch);
      // Whatever failed may have been applied: the next write claims again and redoes what is unfinished.
      if (!outcome.ok && this.sessions.get(fence.key)?.token === fence.token) this.sessions.delete(fence.key);
      return outcome;
    });
  }

  /** Claims the key for `fence` (see the top of this file) and answers its state; throws an IngestFailure. */
  loadState(fence: Fence): Promise<Map<string, string>> {
    const invalid = invalidKey(fence.key);
    if (invalid !== null) return Promise.reject(new IngestFailure(invalid));
    return this.exclusive(fence.key, async () => {
      const opened = await this.open(fence);
      if (!opened.ok) throw new IngestFailure(opened.error);
      return new Map(opened.session.state);
    });
  }

  private async step(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    const ready = await this.ready();
    if (!ready.ok) return ready;
    let session = this.sessions.get(fence.key);
    // This process already holds a newer lease on the key: an older run's late write.
    if (session !== undefined && fence.token < session.token) return fencedError(fence.key, fence.token, session.token);
    if (session === undefined || session.token !== fence.token) {
      const opened = await this.open(fence);
      if (!opened.ok) return opened;
      session = opened.session;
    }
    const entries: StepEntry[] = batch.entries.map((e) => [ingestMsgId(fence.key, e.dedupeId), e.data]);
    const tooLarge = oversized(entries, ready.target.maxEntryBytes);
    if (tooLarge !== null) return { ok: false, error: tooLarge };
    const body: StepBody = {
      seq: session.last,
      ...(batch.stateSet === undefined || Object.keys(batch.stateSet).length === 0 ? {} : { set: { ...batch.stateSet } }),
      ...(batch.stateDel === undefined || batch.stateDel.length === 0 ? {} : { del: [...batch.stateDel] }),
      ...(entries.length === 0 ? {} : { entries }),
    };
    // The record first: from here on the step counts, and a successor publishes what this owner does not.
    const committed = await session.append('step', body);
    if (!committed.ok) return committed;
    session.stepCommitted(batch.stateSet, batch.stateDel);
    const published = await session.publish(entries);
    if (published.ok) await this.compactIfDue(session);
    return published;
  }

  /** The claim: fold the log, append a claim record, finish the newest step's entries. */
  private async open(fence: Fence): Promise<Opened> {
    this.sessions.delete(fence.key);
    const ready = await this.ready();
    if (!ready.ok) return ready;
    const { target } = ready;
    const subject = jetStreamSubject(target.data.jetStream, fence.key);
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      let session: KeySession;
      let redo: { seq: number; entries: readonly StepEntry[] } | null;
      try {
        const folded = await target.log.read(fence.key);
        if (folded.lastToken > fence.token) return fencedError(fence.key, fence.token, folded.lastToken);
        const last = await target.data.lastSeq(subject);
        const { state, base, records } = folded;
        session = new KeySession(target, fence, { subject, lastRecord: folded.lastSeq, base, records, state, last });
        redo = folded.lastEntries;
        const claimed = await target.log.append(fence.key, { token: fence.token, kind: 'step', base }, { seq: last }, folded.lastSeq);
        // Someone appended between the read and the claim: read again (a newer owner fences us then).
        if (!claimed.ok) continue;
        session.claimed(claimed.last);
        if (redo !== null) await session.catchUp(redo.seq);
      } catch (error) {
        if (!(error instanceof ForeignRecordError)) return { ok: false, error: natsIngestError(error, `claiming ${fence.key}`) };
        const message = `the state log of ${fence.key} holds a message ingest did not write: ${error.message}`;
        return { ok: false, error: { code: 'jetstream_rejected', retryable: false, message } };
      }
      if (redo !== null) {
        const published = await session.publish(redo.entries);
        if (!published.ok) return published;
      }
      this.sessions.set(fence.key, session);
      return { ok: true, session };
    }
    const message = `the state log of ${fence.key} moved under each of ${MAX_CLAIM_ATTEMPTS} claims by token ${fence.token}; claimed again later`;
    return { ok: false, error: { code: 'jetstream_unavailable', retryable: true, message } };
  }

  /** After a step: past `snapshotEvery` records, the state is written whole and the records before it purged. */
  private async compactIfDue(session: KeySession): Promise<void> {
    if (session.records < this.snapshotEvery) return;
    const { key } = session.fence;
    const snapshot = await session.append('snapshot', { seq: session.last, state: Object.fromEntries(session.state) });
    if (!snapshot.ok) {
      // The step had succeeded; the next write claims again (or is fenced).
      this.sessions.delete(key);
      this.options.log?.warn({ key, err: snapshot.error.message }, 'state log snapshot not written');
      return;
    }
    session.snapshotTaken(snapshot.first);
    const ready = await this.ready();
    if (!ready.ok) return;
    try {
      await ready.target.log.purgeBelow(key, snapshot.first);
    } catch (error) {
      // Only space: readers start at the snapshot whatever lies below it; the next snapshot purges again.
      this.options.log?.warn({ key, err: errorMessage(error) }, 'state log records below a snapshot not purged');
    }
  }

  private ready(): Promise<Ready> {
    this.target ??= connectIngestTarget(this.options.connection, this.options.jetStream, this.timeoutMs).then((answer) => {
      // A failure is answered once; the next call tries again (the stream may have been created since).
      if (!answer.ok) this.target = undefined;
      return answer;
    });
    return this.target;
  }

  /** One call at a time per key: a session is one owner's sequence of steps. */
  private exclusive<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const result = previous.then(run);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return result;
  }
}

function oversized(entries: readonly StepEntry[], maxEntryBytes: number): IngestError | null {
  for (const [msgId, data] of entries) {
    const size = Buffer.byteLength(msgId) + Buffer.byteLength(data);
    if (size > maxEntryBytes) {
      const message = `entry ${msgId} is ${size} bytes with its id; the JetStream target takes at most ${maxEntryBytes}: nothing was written`;
      return { code: 'jetstream_rejected', retryable: false, message };
    }
  }
  return null;
}

function invalidKey(key: string): IngestError | null {
  const name = streamNameSchema.safeParse(key);
  if (name.success) return null;
  return {
    code: 'stream_invalid',
    retryable: false,
    stream: key,
    message: `${JSON.stringify(key)} is not a stream name (1–200 of A–Z a–z 0–9 _ . : { } - /), so no JetStream subject holds it`,
  };
}
