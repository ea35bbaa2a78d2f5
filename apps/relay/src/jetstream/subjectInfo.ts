import { STREAM_START, jetStreamId } from '@streamgate/protocol';
import type { StreamInfo } from '../core/StreamSource.js';

/** What one JetStream stream and one of its subjects hold, read together. */
export interface SubjectFacts {
  /** The JetStream stream's state; null when the stream does not exist. */
  readonly stream: { readonly firstSeq: number; readonly lastSeq: number; readonly numDeleted: number } | null;
  /** The subject's oldest and newest stored sequences; null when it stores none. */
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
}

/** The probed position: its sequence and what the stream stores there now. */
export interface ProbeFacts {
  readonly seq: number;
  /** `subject`: a message of this subject; `other`: of another subject; `none`: nothing (removed). */
  readonly stored: 'subject' | 'other' | 'none';
}

/**
 * The StreamInfo that makes classifyRecovery decide a resume from `probe` as the JetStream
 * stream's history says it went. A per-task stream is one subject of a JetStream stream, and
 * JetStream keeps for a subject only what it stores now: no last sequence once every message of
 * it is gone, no count of messages ever added (Redis's entries-added), no deletion mark. So the
 * info is built around the probe, which is the only position the decision is about:
 *
 * - Limits (max_msgs_per_subject, max_age, max_msgs, max_bytes) and purges remove a subject's
 *   oldest messages first, so a probe that is removed and below the subject's oldest message (or
 *   the subject is empty) lost what followed it: `truncated` (Redis errs the same way for the
 *   last trimmed entry). A removed probe inside or above the subject's range can only have gone
 *   by an explicit delete, a retraction: `recovered`, as below Redis's max-deleted-entry-id.
 * - A probe the stream stores under another subject was never a position of this stream in this
 *   incarnation (the JetStream stream was recreated, or the id is another stream's): `reset`; so
 *   is one beyond the stream's last sequence.
 * - `0-0` lost something when the JetStream stream removed any sequence below the subject's
 *   oldest message; JetStream cannot say whether that one was the subject's, so this errs towards
 *   `truncated` as Redis does. A subject storing nothing reads as a missing key: `0-0` is
 *   `recovered` and the fresh position is `0-0`, never another subject's sequence.
 *
 * Without a probe (a stream's first read) the info is the subject's own: its last stored
 * sequence is where live reading starts and the position fresh subscribers get.
 */
export function subjectInfo(facts: SubjectFacts, probe?: ProbeFacts): { info: StreamInfo | null; probeExists: boolean } {
  const { stream } = facts;
  if (stream === null) return { info: null, probeExists: false };
  const probeExists = probe?.stored === 'subject';
  // A removed sequence the stream did write: the probe's entry may have been this subject's.
  const removed = probe !== undefined && probe.seq > 0 && probe.stored === 'none' && probe.seq <= stream.lastSeq;
  if (facts.firstSeq === null || facts.lastSeq === null) {
    if (!removed) return { info: null, probeExists: false };
    // Emptied by limits: everything after the probe that was this subject's is gone, unless the
    // probe was the stream's very last message (nothing was written after it).
    return {
      info: {
        lastGeneratedId: jetStreamId(stream.lastSeq),
        firstEntryId: null,
        length: 0,
        entriesAdded: 1,
        maxDeletedEntryId: STREAM_START,
      },
      probeExists: false,
    };
  }
  const first = facts.firstSeq;
  let lostBefore = false;
  if (probe === undefined || probe.seq === 0) lostBefore = stream.firstSeq > 1 || (stream.numDeleted > 0 && first > stream.firstSeq);
  else if (removed && probe.seq < first) lostBefore = true;
  return {
    info: {
      lastGeneratedId: jetStreamId(removed ? Math.max(facts.lastSeq, probe.seq) : facts.lastSeq),
      firstEntryId: jetStreamId(first),
      // classifyRecovery reads only whether entries were removed (entriesAdded > length): the
      // subject's own count is not needed, and JetStream counts it only by scanning every subject.
      length: 0,
      entriesAdded: lostBefore ? 1 : 0,
      maxDeletedEntryId: removed ? jetStreamId(probe.seq) : STREAM_START,
    },
    probeExists,
  };
}
