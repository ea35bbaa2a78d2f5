import { PubHeaders } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { apiErrorOf, WRONG_LAST_SEQUENCE } from './natsIngestError.js';
import { storedMessage } from './storedMessage.js';

export type PublishAnswer =
  | { kind: 'stored'; seq: number }
  /** JetStream already holds a message with this Nats-Msg-Id within its duplicate window. */
  | { kind: 'duplicate'; seq: number }
  /** The subject's last sequence was not the one expected: someone else wrote since. */
  | { kind: 'conflict' };

/**
 * The per-task subjects of one JetStream stream (§17): publishing one entry with its
 * `Nats-Msg-Id` and `Nats-Expected-Last-Subject-Sequence`, and reading back what was written
 * after a sequence. Every call rejects with the NATS client's error on anything else.
 */
export class DataSubject {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly jetStream: string,
    private readonly timeoutMs: number,
  ) {}

  async publish(subject: string, data: string, msgId: string, expectedLast: number): Promise<PublishAnswer> {
    try {
      const ack = await this.js.publish(subject, data, {
        msgID: msgId,
        timeout: this.timeoutMs,
        // One attempt: a retry is the writer's, after it has read what is there.
        retries: 1,
        // streamName: a subject another stream captures is refused, not stored where no relay reads.
        expect: { streamName: this.jetStream, lastSubjectSequence: expectedLast },
      });
      return ack.duplicate ? { kind: 'duplicate', seq: ack.seq } : { kind: 'stored', seq: ack.seq };
    } catch (error) {
      // A clustered JetStream checks the expected sequence before its duplicate window, so a
      // message it already holds is refused this way too when something was written after it.
      if (apiErrorOf(error)?.code === WRONG_LAST_SEQUENCE) return { kind: 'conflict' };
      throw error;
    }
  }

  /** The subject's last sequence; 0 when it holds nothing. */
  async lastSeq(subject: string): Promise<number> {
    return (await storedMessage(this.jsm, this.jetStream, { last_by_subj: subject }))?.seq ?? 0;
  }

  /**
   * The Nats-Msg-Id of every message of `subject` after sequence `after`, and the subject's last
   * sequence (below `after` when the stream was recreated or purged since).
   */
  async idsAfter(subject: string, after: number): Promise<{ ids: string[]; last: number }> {
    const last = await this.lastSeq(subject);
    const ids: string[] = [];
    for (let from = after + 1; from <= last;) {
      const message = await storedMessage(this.jsm, this.jetStream, { next_by_subj: subject, seq: from });
      if (message === null || message.seq > last) break;
      const id = message.header(PubHeaders.MsgIdHdr);
      if (id !== undefined) ids.push(id);
      from = message.seq + 1;
    }
    return { ids, last };
  }
}
