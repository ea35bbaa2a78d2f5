import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { jetStreamSubject } from '@streamgate/protocol';
import { apiErrorOf, WRONG_LAST_SEQUENCE } from './natsIngestError.js';
import { baseOf, emptyLog, foldLog, HEADER, recordParts, tokenOf } from './stateRecords.js';
import type { FoldedLog, LogMessage, RecordKind, StepBody } from './stateRecords.js';
import { storedMessage } from './storedMessage.js';

export type AppendAnswer =
  /** Stored: the record's first and last sequences (equal unless it took several parts). */
  | { ok: true; first: number; last: number }
  /** The log's last sequence was not the one expected: someone appended since. Parts stored before stay incomplete. */
  | { ok: false };

export interface RecordMeta {
  readonly token: number;
  readonly kind: RecordKind;
  readonly base: number;
}

/**
 * The state logs of one JetStream target's keys: one subject of the stream `<STREAM>_INGEST` per
 * key (`<STREAM>_INGEST.<name>`, names mapped as §17 maps them), appended to only with
 * `Nats-Expected-Last-Subject-Sequence`, so that appends by two writers cannot interleave and the
 * first append after another writer's fails. stateRecords.ts says what a record holds.
 */
export class IngestStateLog {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
    private readonly timeoutMs: number,
    /** The largest part a record is split into (under the server's max_payload, headers included). */
    private readonly partBytes: number,
  ) {}

  subjectOf(key: string): string {
    return jetStreamSubject(this.stream, key);
  }

  /** The token of the newest record's writer; 0 for an empty log. */
  async lastToken(key: string): Promise<number> {
    const last = await storedMessage(this.jsm, this.stream, { last_by_subj: this.subjectOf(key) });
    return last === null ? 0 : tokenOf(last);
  }

  /** The key's log folded from its snapshot in force; throws ForeignRecordError for a message no ingest writer wrote. */
  async read(key: string): Promise<FoldedLog> {
    const subject = this.subjectOf(key);
    const last = await storedMessage(this.jsm, this.stream, { last_by_subj: subject });
    if (last === null) return emptyLog();
    const messages: LogMessage[] = [];
    // From the base the last record names: records below it may already be purged, and
    // next_by_subj then starts at the oldest one kept, which is that snapshot's first part.
    for (let from = baseOf(last); ;) {
      const message = await storedMessage(this.jsm, this.stream, { next_by_subj: subject, seq: from });
      if (message === null) break;
      messages.push(message);
      from = message.seq + 1;
    }
    return foldLog(messages);
  }

  /** Appends one record after `expectedLast` (the log's last sequence as the caller knows it; 0: empty). */
  async append(
    key: string,
    meta: RecordMeta,
    body: StepBody | { seq: number; state: Record<string, string> },
    expectedLast: number,
  ): Promise<AppendAnswer> {
    const subject = this.subjectOf(key);
    const parts = recordParts(body, this.partBytes);
    let expected = expectedLast;
    let first = 0;
    for (const [index, part] of parts.entries()) {
      const h = headers();
      h.set(HEADER.token, String(meta.token));
      h.set(HEADER.kind, meta.kind);
      h.set(HEADER.part, `${index + 1}/${parts.length}`);
      h.set(HEADER.base, String(meta.base));
      try {
        const ack = await this.js.publish(subject, part, {
          headers: h,
          timeout: this.timeoutMs,
          retries: 1,
          expect: { streamName: this.stream, lastSubjectSequence: expected },
        });
        if (index === 0) first = ack.seq;
        expected = ack.seq;
      } catch (error) {
        if (apiErrorOf(error)?.code === WRONG_LAST_SEQUENCE) return { ok: false };
        throw error;
      }
    }
    return { ok: true, first, last: expected };
  }

  /** Removes the key's records below `seq` (the first part of a snapshot now in force). */
  async purgeBelow(key: string, seq: number): Promise<void> {
    await this.jsm.streams.purge(this.stream, { filter: this.subjectOf(key), seq });
  }
}
