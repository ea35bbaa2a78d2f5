import { STREAM_START, compareStreamIds } from '@streamgate/protocol';
import type { Recovery, StreamId } from '@streamgate/protocol';
import type { StreamInfo } from './StreamSource.js';

export type RecoveryDecision = { recovery: Recovery; after: StreamId };

/**
 * Decides how a resume from `from` goes, from the stream's metadata alone. Redis trims from the
 * head, so an id older than the first retained entry is either trimmed (entries may be lost) or
 * from another incarnation of the key; `entriesAdded > length` tells the two apart. Entries gone
 * by XDEL are retractions, not losses, but before the first retained entry nothing tells them
 * from trimmed ones (XTRIM leaves `maxDeletedEntryId` alone, and XDEL 2 plus a trim of 1 reads
 * exactly like XDEL 1 2). So the rule errs towards telling the client it lost something: a client
 * whose `from` was exactly the last trimmed entry, or whose older entries were only deleted,
 * hears `truncated` although it missed nothing.
 *
 * `fromExists` is whether an entry with id `from` is still in the stream.
 */
export function classifyRecovery(from: StreamId, info: StreamInfo | null, fromExists: boolean): RecoveryDecision {
  if (info === null) {
    // The key is gone. Asking for everything from the start of nothing is a clean recovery;
    // any other position belonged to a stream that no longer exists.
    return from === STREAM_START ? { recovery: 'recovered', after: STREAM_START } : { recovery: 'reset', after: STREAM_START };
  }
  const cmpLast = compareStreamIds(from, info.lastGeneratedId);
  if (cmpLast > 0) return { recovery: 'reset', after: STREAM_START };
  if (cmpLast === 0 || fromExists) return { recovery: 'recovered', after: from };

  const removedSome = info.entriesAdded > info.length;
  const first = info.firstEntryId;
  if (first === null || compareStreamIds(from, first) < 0) {
    if (from === STREAM_START && !removedSome) return { recovery: 'recovered', after: STREAM_START };
    // Every retained entry is newer than a trimmed `from`, so delivery continues after `from`
    // itself: the client's position never moves backwards on a truncation.
    return removedSome ? { recovery: 'truncated', after: from } : { recovery: 'reset', after: STREAM_START };
  }
  // Inside the retained range but absent: deleted with XDEL (then nothing after it is missing)
  // or never an id of this stream.
  if (compareStreamIds(from, info.maxDeletedEntryId) <= 0) return { recovery: 'recovered', after: from };
  return { recovery: 'reset', after: STREAM_START };
}
