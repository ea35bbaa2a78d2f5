import { compareStreamIds, STREAM_START } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import type { CheckSnapshot, CursorLook, KeySighting } from './KeySighting.js';
import type { StreamResetCause } from './StreamResetCause.js';

/** What the IncarnationTracker knows of one watched key between two sightings. */
export interface KeyState {
  /** The key was seen present, or the reader had a position in it. */
  existed: boolean;
  /** Seen missing after it existed: the next sighting of it present is a new incarnation. */
  vanished: boolean;
  entriesAdded: number | null;
  epoch: number;
  /**
   * The read position when the server behind the key may have changed (suspectLoss), kept
   * until a check has looked at its entry: the reader goes on to read the new server's writes,
   * and the entries lost are the ones just before its position at the change.
   */
  witness: StreamId | null;
  /** The `seq` of the latest sighting taken into account: an older one describes the key as it was before. */
  seen: number;
}

/** Takes a sighting into the key's state; the cause when it shows a new incarnation. */
export function judgeSighting(state: KeyState, snapshot: CheckSnapshot, sighting: KeySighting): StreamResetCause | null {
  if (!sighting.exists) {
    // The reader read from it (a position above the start) even if no look saw it present yet:
    // a key missing when the reader began, then written, deleted and written again before the
    // first look, is the same case as one that existed all along.
    if (state.existed || compareStreamIds(snapshot.cursor, STREAM_START) > 0) state.vanished = true;
    return null;
  }
  // In one incarnation the last id never falls below an id read from it, and entries-added
  // never falls; the read position was at most the last id when the check was sent. Nor does
  // an entry the reader read leave it but by a trim or an XDEL.
  const fell =
    compareStreamIds(sighting.lastGeneratedId, snapshot.cursor) < 0 ||
    (sighting.entriesAdded !== null && state.entriesAdded !== null && sighting.entriesAdded < state.entriesAdded);
  // A key seen missing was recreated. Ids or entries-added that fell, while a witness says the
  // server may have changed, are a promoted replica without the last entries (until new writes
  // overtake them); otherwise a recreation, which also explains a missing read entry.
  const cause = resetCause(
    state.vanished,
    fell || neverHeld(snapshot.cursor, sighting),
    state.witness !== null,
    lostAt(snapshot.probe, sighting),
  );
  // A look at the witness's entry settles it, either way; a sighting without one (a resume's inspect) does not.
  if (sighting.cursorStored !== undefined && state.witness === snapshot.probe) state.witness = null;
  state.existed = true;
  state.vanished = false;
  if (sighting.entriesAdded !== null) state.entriesAdded = sighting.entriesAdded;
  return cause;
}

function resetCause(vanished: boolean, fell: boolean, witnessed: boolean, lost: boolean): StreamResetCause | null {
  if (vanished) return 'recreated';
  if (fell) return witnessed ? 'lost_in_failover' : 'recreated';
  return lost ? 'lost_in_failover' : null;
}

/**
 * The stream never held the entry at the reader's position: nothing was ever removed from it
 * (entries-added equals its length) and every entry it stores is above the position. In one
 * incarnation the entry read would be stored, or removed and counted in entries-added. So it is
 * another incarnation, whose ids happen to lie above the old ones (ids are times): a key deleted
 * and written again before any look saw the old one, which neither last-generated-id nor a
 * baseline of entries-added can show.
 */
function neverHeld(cursor: StreamId, sighting: Partial<CursorLook> & { readonly entriesAdded: number | null }): boolean {
  const { length, firstEntryId } = sighting;
  if (compareStreamIds(cursor, STREAM_START) <= 0 || length === undefined || sighting.entriesAdded !== length) return false;
  return length === 0 || (firstEntryId !== null && firstEntryId !== undefined && compareStreamIds(firstEntryId, cursor) > 0);
}

/**
 * An entry the reader read (`id`) is gone although it was neither trimmed (it is not below the
 * first entry) nor deleted with XDEL (it is above max-deleted-entry-id): the stream lost
 * entries the reader delivered. That is what a failover to a replica that had not yet copied
 * them leaves, even once new writes have taken the last id above the position again.
 */
function lostAt(id: StreamId, sighting: Partial<CursorLook>): boolean {
  if (sighting.cursorStored !== false || compareStreamIds(id, STREAM_START) <= 0) return false;
  const { firstEntryId, maxDeletedEntryId } = sighting;
  if (firstEntryId === null || firstEntryId === undefined || maxDeletedEntryId === null || maxDeletedEntryId === undefined) return false;
  return compareStreamIds(id, firstEntryId) >= 0 && compareStreamIds(id, maxDeletedEntryId) > 0;
}
