import type { JetStreamManager, StreamInfo as JetStreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { StreamEntry } from '../core/StreamSource.js';
import type { JetStreamReadKind } from './JetStreamSourceOptions.js';
import type { ProbeFacts, SubjectFacts } from './subjectInfo.js';
import { answeredWithoutLeader } from './answeredWithoutLeader.js';
import { getStreamMessage } from './getStreamMessage.js';
import type { StreamMessage, StreamMessageQuery } from './getStreamMessage.js';
import { isStreamNotFound } from './natsSourceError.js';
import { RequestGate } from './RequestGate.js';
import { SharedRequest } from './SharedRequest.js';
import { toStreamEntry } from './toStreamEntry.js';

/**
 * At most this many MSG.GETs out at once. A leader answers one in about 0.1 ms: 128 keep it busy
 * with each well inside the request timeout, where a subscribe burst of 10,000 streams (three
 * each) sent at once left the late ones to time out in its queue.
 */
const MAX_REQUESTS_OUT = 128;

/** A page of one subject's messages after a position, and whether that position is stored as one of them. */
export interface SubjectPage {
  readonly entries: StreamEntry[];
  readonly afterStored: boolean;
}

/**
 * Reads one JetStream stream's messages by sequence, with STREAM.MSG.GET (`next_by_subj`,
 * `last_by_subj`, `seq`). Each is one request answered by the stream's leader, with no state on
 * the server: a timeout or a leader that died mid-request leaves nothing to clean up, and the
 * read is simply asked again. An ordered consumer would read a page in fewer round trips, but on
 * a clustered server 2.9 each one is created through the meta leader, a cost and a point of
 * failure per gap, and it must be torn down again. Direct get (`allow_direct`) is not used:
 * replicas answer it and may not hold the newest messages yet.
 */
export class SubjectReader {
  /** Requests out at once to the stream's leader, for every read this reader makes. */
  private readonly gate = new RequestGate(MAX_REQUESTS_OUT);
  /** The JetStream stream's state, shared by the reads that ask for it together. */
  private readonly streamState = new SharedRequest(() => this.info());

  constructor(
    private readonly connection: () => Promise<NatsConnection>,
    private readonly jsm: () => Promise<JetStreamManager>,
    private readonly jetStream: string,
    private readonly timeoutMs: number,
    private readonly onRead: (kind: JetStreamReadKind) => void,
  ) {}

  /**
   * The subject's messages with sequence above `after`, oldest first, at most `count`. The first
   * request asks from `after` itself, so the same answer says whether `after` is still stored:
   * when it is, nothing between it and the first message returned was removed before the read
   * (limits remove a subject's oldest first), and the page is contiguous with it.
   */
  async after(subject: string, after: number, count: number): Promise<SubjectPage> {
    const entries: StreamEntry[] = [];
    let afterStored = false;
    let from = after;
    while (entries.length < count) {
      const message = await this.get({ next_by_subj: subject, seq: from });
      if (message === null) break;
      if (message.seq === after && after > 0) afterStored = true;
      else entries.push(toStreamEntry(message.seq, message.data));
      from = message.seq + 1;
    }
    return { entries, afterStored };
  }

  /**
   * The JetStream stream's state and the subject's span; with `probe`, what is stored at that
   * sequence. Null when the JetStream stream does not exist. The requests go out together.
   */
  async facts(subject: string, probe?: number): Promise<{ facts: SubjectFacts; probe?: ProbeFacts; info: JetStreamInfo } | null> {
    try {
      const [info, first, last, at] = await Promise.all([
        this.streamState.ask(),
        this.get({ next_by_subj: subject, seq: 0 }),
        this.get({ last_by_subj: subject }),
        probe === undefined || probe === 0 ? Promise.resolve(null) : this.get({ seq: probe }),
      ]);
      // A replica's view is no ground for truncated or reset: the hub retries a failed read.
      if (answeredWithoutLeader(info)) throw new Error(`JetStream stream ${this.jetStream} has no leader now: its state is not known`);
      const facts: SubjectFacts = {
        stream: { firstSeq: info.state.first_seq, lastSeq: info.state.last_seq, numDeleted: info.state.num_deleted ?? 0 },
        firstSeq: first?.seq ?? null,
        lastSeq: last?.seq ?? null,
      };
      if (probe === undefined) return { facts, info };
      const stored = at === null ? 'none' : at.subject === subject ? 'subject' : 'other';
      return { facts, probe: { seq: probe, stored }, info };
    } catch (thrown) {
      if (isStreamNotFound(thrown)) return null;
      throw thrown;
    }
  }

  /**
   * The JetStream stream's info, never filtered by subject: a `subjects_filter` makes the server
   * scan every subject's state (about 1.5 ms per request at 10,000 subjects on server 2.9), which
   * a subscribe storm of thousands of streams queued past the request timeout. The periodic check
   * asks it here directly, past the gate, so a burst of reads never makes the stream look
   * unanswered.
   */
  async info(): Promise<JetStreamInfo> {
    const jsm = await this.jsm();
    this.onRead('info');
    return jsm.streams.info(this.jetStream);
  }

  private get(query: StreamMessageQuery): Promise<StreamMessage | null> {
    return this.gate.run(async () => {
      const nc = await this.connection();
      this.onRead('get');
      return getStreamMessage(nc, this.jetStream, query, this.timeoutMs);
    });
  }
}
