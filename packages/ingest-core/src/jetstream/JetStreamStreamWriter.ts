import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamId, jetStreamSubject, streamNameSchema } from '@streamgate/protocol';
import type { CoreLog } from '../CoreLog.js';
import { errorMessage, IngestFailure } from '../IngestError.js';
import type { IngestError } from '../IngestError.js';
import type { Fence, StreamWriter, WriteBatch, WriteOutcome } from '../StreamWriter.js';
import { DataSubject } from './DataSubject.js';
import { ingestMsgId } from './ingestMsgId.js';
import { IngestStateLog } from './IngestStateLog.js';
import type { RecordMeta } from './IngestStateLog.js';
import { natsIngestError } from './natsIngestError.js';
import { openIngestTarget } from './openIngestTarget.js';
import { ForeignRecordError } from './stateRecords.js';
import type { StepBody, StepEntry } from './stateRecords.js';

/*
 * INVARIANT: a stream's subject holds each dedupe id's entry at most once, in the order its steps
 * were committed, and every message ingest stores there belongs to a step its key's state log
 * committed. (Leases stay in Redis: they need a per-key TTL, which nats-server 2.9's KV lacks,
 * and ingest coordinates through Redis anyway. The fence is enforced here, in JetStream.)
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
 * still cannot store an id twice, since every publish is checked against the subject's last
 * sequence; they only make each other read their logs again.
 *
 * Every NATS failure is an IngestError: `jetstream_unavailable` (retryable: no answer, no leader,
 * a lost connection; the outcome may be unknown, so the key's session is dropped and the next
 * write claims again, redoing what is unfinished), `jetstream_rejected` (JetStream or the client
 * refused for good), `fenced`, `stream_invalid` (a key that is no stream name).
 */

export interface JetStreamStreamWriterOptions {
  /** A connected NATS connection; the writer never closes it. */
  readonly connection: NatsConnection;
  /** The JetStream stream holding the per-task subjects (docs/protocol.md §17), e.g. STREAMGATE. */
  readonly jetStream: string;
  /** How long one JetStream request may take. Default 5 000 ms. */
  readonly timeoutMs?: number;
  /** Step records in a state log before it is compacted into a snapshot. Default 64. */
  readonly snapshotEvery?: number;
  /** Compactions that failed (the step itself had succeeded) are logged here. */
  readonly log?: CoreLog;
}

/** One owner's view of one key, from its claim on. */
interface Session {
  readonly token: number;
  readonly subject: string;
  /** The state log's last sequence: what the next append expects. */
  lastRecord: number;
  /** First sequence of the snapshot in force. */
  base: number;
  /** Step records since that snapshot. */
  records: number;
  readonly state: Map<string, string>;
  /** The data subject's last sequence: what the next publish expects. */
  last: number;
  /** Nats-Msg-Ids found stored after this owner's starting point, by whoever stored them. */
  readonly written: Set<string>;
}

interface Target {
  readonly data: DataSubject;
  readonly log: IngestStateLog;
  /** The largest entry (payload and Nats-Msg-Id) the target takes. */
  readonly maxEntryBytes: number;
}

type Opened = { ok: true; session: Session } | { ok: false; error: IngestError };
type Applied = { ok: true; written: number; duplicates: number; ids: (string | null)[] } | { ok: false; error: IngestError };

/** Claims that find the log moved between their read and their append before giving up for now. */
const MAX_CLAIM_ATTEMPTS = 5;
/** Times one entry may find the subject moved before the step gives up for now. */
const MAX_CONFLICTS = 5;
/** What a message's headers take besides the Nats-Msg-Id (the expectation headers, framing). */
const HEADER_ROOM = 1_024;

const fenced = (key: string, token: number, newer: number): WriteOutcome & { ok: false } => ({
  ok: false,
  error: {
    code: 'fenced',
    retryable: false,
    message:
      `token ${token} is stale for ${key}: its state log was written by token ${newer} ` +
      `(if no worker holds that token, the lease store lost its fencing counter: raise it above ${newer})`,
  },
});

export class JetStreamStreamWriter implements StreamWriter {
  private readonly sessions = new Map<string, Session>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly timeoutMs: number;
  private readonly snapshotEvery: number;
  private target: Promise<{ ok: true; target: Target } | { ok: false; error: IngestError }> | undefined;

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
    return this.exclusive(fence.key, () => this.step(fence, batch));
  }

  /** Claims the key for `fence` (see the top of this file) and answers its state; throws an IngestFailure. */
  loadState(fence: Fence): Promise<Map<string, string>> {
    const invalid = invalidKey(fence.key);
    if (invalid !== null) return Promise.reject(new IngestFailure(invalid));
    return this.exclusive(fence.key, async () => {
      this.sessions.delete(fence.key);
      const opened = await this.open(fence);
      if (!opened.ok) throw new IngestFailure(opened.error);
      return new Map(opened.session.state);
    });
  }

  private async step(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    const ready = await this.ready();
    if (!ready.ok) return ready;
    const { target } = ready;
    let session = this.sessions.get(fence.key);
    if (session !== undefined && fence.token < session.token) return fenced(fence.key, fence.token, session.token);
    if (session === undefined || session.token !== fence.token) {
      const opened = await this.open(fence);
      if (!opened.ok) return opened;
      session = opened.session;
    }
    const entries: StepEntry[] = batch.entries.map((e) => [ingestMsgId(fence.key, e.dedupeId), e.data]);
    for (const [msgId, data] of entries) {
      const size = Buffer.byteLength(msgId) + Buffer.byteLength(data);
      if (size > target.maxEntryBytes) {
        return {
          ok: false,
          error: {
            code: 'jetstream_rejected',
            retryable: false,
            message: `entry ${msgId} is ${size} bytes with its id; the JetStream target takes at most ${target.maxEntryBytes}: nothing was written`,
          },
        };
      }
    }
    const body: StepBody = {
      seq: session.last,
      ...(batch.stateSet === undefined || Object.keys(batch.stateSet).length === 0 ? {} : { set: { ...batch.stateSet } }),
      ...(batch.stateDel === undefined || batch.stateDel.length === 0 ? {} : { del: [...batch.stateDel] }),
      ...(entries.length === 0 ? {} : { entries }),
    };
    const committed = await this.commit(target, session, fence, 'step', body);
    if (!committed.ok) return committed;
    for (const [field, value] of Object.entries(batch.stateSet ?? {})) session.state.set(field, value);
    for (const field of batch.stateDel ?? []) session.state.delete(field);
    session.records += 1;
    const applied = await this.apply(target, session, fence, entries);
    if (!applied.ok) {
      this.sessions.delete(fence.key);
      return applied;
    }
    await this.compactIfDue(target, session, fence);
    return applied;
  }

  /** Appends one record after the session's last; on any failure the session is dropped. */
  private async commit(
    target: Target,
    session: Session,
    fence: Fence,
    kind: RecordMeta['kind'],
    body: Parameters<IngestStateLog['append']>[2],
  ): Promise<{ ok: true; first: number } | { ok: false; error: IngestError }> {
    try {
      const answer = await target.log.append(fence.key, { token: fence.token, kind, base: session.base }, body, session.lastRecord);
      if (answer.ok) {
        session.lastRecord = answer.last;
        return { ok: true, first: answer.first };
      }
      this.sessions.delete(fence.key);
      const newer = await target.log.lastToken(fence.key);
      if (newer > fence.token) return fenced(fence.key, fence.token, newer);
      return {
        ok: false,
        error: {
          code: 'jetstream_unavailable',
          retryable: true,
          message: `the state log of ${fence.key} moved under token ${fence.token} (an earlier append's answer was lost, or another owner holds the same token); it is read again before the next write`,
        },
      };
    } catch (error) {
      this.sessions.delete(fence.key);
      return { ok: false, error: natsIngestError(error, `appending to the state log of ${fence.key}`) };
    }
  }

  /** Publishes `entries` in order, each unless its id is found stored. */
  private async apply(target: Target, session: Session, fence: Fence, entries: readonly StepEntry[]): Promise<Applied> {
    const ids: (string | null)[] = [];
    let written = 0;
    for (const [msgId, data] of entries) {
      const one = await this.applyOne(target, session, fence, msgId, data);
      if (!one.ok) return one;
      ids.push(one.id);
      if (one.id !== null) written += 1;
    }
    return { ok: true, written, duplicates: entries.length - written, ids };
  }

  private async applyOne(
    target: Target,
    session: Session,
    fence: Fence,
    msgId: string,
    data: string,
  ): Promise<{ ok: true; id: string | null } | { ok: false; error: IngestError }> {
    for (let conflicts = 0; conflicts <= MAX_CONFLICTS; conflicts += 1) {
      if (session.written.has(msgId)) return { ok: true, id: null };
      try {
        const answer = await target.data.publish(session.subject, data, msgId, session.last);
        if (answer.kind === 'stored') {
          session.last = answer.seq;
          return { ok: true, id: jetStreamId(answer.seq) };
        }
        if (answer.kind === 'duplicate') return { ok: true, id: null };
        await this.catchUp(target, session, session.last);
        const newer = await target.log.lastToken(fence.key);
        if (newer > fence.token) {
          this.sessions.delete(fence.key);
          return fenced(fence.key, fence.token, newer);
        }
      } catch (error) {
        return { ok: false, error: natsIngestError(error, `publishing ${msgId} to ${session.subject}`) };
      }
    }
    return {
      ok: false,
      error: {
        code: 'jetstream_unavailable',
        retryable: true,
        message: `${session.subject} changed under token ${fence.token} ${MAX_CONFLICTS + 1} times while publishing ${msgId}; is something else writing to it?`,
      },
    };
  }

  /** Learns the ids stored on the subject after `after`, and its last sequence. */
  private async catchUp(target: Target, session: Session, after: number): Promise<void> {
    const found = await target.data.idsAfter(session.subject, after);
    for (const id of found.ids) session.written.add(id);
    session.last = found.last;
  }

  /** The claim: fold the log, append a claim record, finish the newest step's entries. */
  private async open(fence: Fence): Promise<Opened> {
    const ready = await this.ready();
    if (!ready.ok) return ready;
    const { data, log } = ready.target;
    this.sessions.delete(fence.key);
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      const subject = jetStreamSubject(data.jetStream, fence.key);
      let session: Session;
      let redo: { seq: number; entries: readonly StepEntry[] } | null;
      try {
        const folded = await log.read(fence.key);
        if (folded.lastToken > fence.token) return fenced(fence.key, fence.token, folded.lastToken);
        const last = await data.lastSeq(subject);
        const { state, base, records, lastEntries } = folded;
        session = { token: fence.token, subject, lastRecord: folded.lastSeq, base, records, state, last, written: new Set() };
        redo = lastEntries;
        const claimed = await log.append(fence.key, { token: fence.token, kind: 'step', base }, { seq: last }, folded.lastSeq);
        // Someone appended between the read and the claim: read again (a newer owner fences us then).
        if (!claimed.ok) continue;
        session.lastRecord = claimed.last;
        session.records += 1;
        if (redo !== null) await this.catchUp(ready.target, session, redo.seq);
      } catch (error) {
        if (error instanceof ForeignRecordError) {
          return {
            ok: false,
            error: {
              code: 'jetstream_rejected',
              retryable: false,
              message: `the state log of ${fence.key} holds a message ingest did not write: ${error.message}`,
            },
          };
        }
        return { ok: false, error: natsIngestError(error, `claiming ${fence.key}`) };
      }
      if (redo !== null) {
        const applied = await this.apply(ready.target, session, fence, redo.entries);
        if (!applied.ok) return applied;
      }
      this.sessions.set(fence.key, session);
      return { ok: true, session };
    }
    return {
      ok: false,
      error: {
        code: 'jetstream_unavailable',
        retryable: true,
        message: `the state log of ${fence.key} moved under each of ${MAX_CLAIM_ATTEMPTS} claims by token ${fence.token}; claimed again later`,
      },
    };
  }

  /** After a step: past `snapshotEvery` records, the state is written whole and the records before it purged. */
  private async compactIfDue(target: Target, session: Session, fence: Fence): Promise<void> {
    if (session.records < this.snapshotEvery) return;
    const snapshot = await this.commit(target, session, fence, 'snapshot', { seq: session.last, state: Object.fromEntries(session.state) });
    if (!snapshot.ok) {
      // The step had succeeded; the session is dropped, and the next write claims again (or is fenced).
      this.options.log?.warn({ key: fence.key, err: snapshot.error.message }, 'state log snapshot not written');
      return;
    }
    session.base = snapshot.first;
    session.records = 0;
    try {
      await target.log.purgeBelow(fence.key, snapshot.first);
    } catch (error) {
      // Only space: readers start at the snapshot whatever lies below it; the next snapshot purges again.
      this.options.log?.warn({ key: fence.key, err: errorMessage(error) }, 'state log records below a snapshot not purged');
    }
  }

  private ready(): Promise<{ ok: true; target: Target } | { ok: false; error: IngestError }> {
    this.target ??= this.connect().then((answer) => {
      // A failure is answered once; the next write tries again (the stream may have been created since).
      if (!answer.ok) this.target = undefined;
      return answer;
    });
    return this.target;
  }

  private async connect(): Promise<{ ok: true; target: Target } | { ok: false; error: IngestError }> {
    const { connection: nc, jetStream } = this.options;
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc, { timeout: this.timeoutMs, checkAPI: false });
    } catch (error) {
      return { ok: false, error: natsIngestError(error, `opening JetStream ${jetStream}`) };
    }
    const js = jetstream(nc, { timeout: this.timeoutMs });
    const opened = await openIngestTarget(jsm, jetStream);
    if (!opened.ok) return opened;
    const maxPayload = nc.info?.max_payload ?? 1_048_576;
    const { maxMsgSize, stateStream } = opened.facts;
    const maxEntryBytes = (maxMsgSize > 0 ? Math.min(maxMsgSize, maxPayload) : maxPayload) - HEADER_ROOM;
    return {
      ok: true,
      target: {
        data: new DataSubject(js, jsm, jetStream, this.timeoutMs),
        log: new IngestStateLog(js, jsm, stateStream, this.timeoutMs, maxPayload - HEADER_ROOM),
        maxEntryBytes,
      },
    };
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
