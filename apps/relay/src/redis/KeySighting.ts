import type { StreamId, StreamName } from '@streamgate/protocol';

/** What tells one incarnation of a key from the next: its last id and (Redis 7+) how many entries it ever had. */
export interface IncarnationMark {
  readonly lastGeneratedId: StreamId;
  /** Null before Redis 7, which does not count: a falling length is trimming, not a new key. */
  readonly entriesAdded: number | null;
}

/**
 * What one check of a key found: missing, or present with its mark and (from the periodic
 * check) a look at the reader's position; null when the check failed for it.
 */
export type KeySighting = { readonly exists: false } | ({ readonly exists: true } & IncarnationMark & Partial<CursorLook>);

/**
 * Whether the entry at the reader's position is still stored, with what tells a loss from a
 * trim (the first entry moved past it) or an XDEL (max-deleted-entry-id reached it). Asked
 * no later than the XINFO that gives the other two (redisIncarnationProbe asks both in one
 * script): both only move forward in one incarnation, so an entry removed by either before the
 * look shows as removed that way in the XINFO.
 */
export interface CursorLook {
  /** The entry asked about (CheckSnapshot.probe) is stored. */
  readonly cursorStored: boolean;
  /** Null for an empty stream. */
  readonly firstEntryId: StreamId | null;
  /** Null before Redis 7, which does not report it: an XDEL cannot be ruled out. */
  readonly maxDeletedEntryId: StreamId | null;
  /** Entries stored now: with entries-added, whether any was ever removed from this incarnation. */
  readonly length: number;
}

/**
 * Checks keys on the command connection: per key whether it exists, whether `ids[i]` (an entry
 * the reader read: CheckSnapshot.probe) is stored, and its XINFO STREAM's marks, seen at once.
 */
export type IncarnationProbe = (keys: readonly StreamName[], ids: readonly StreamId[]) => Promise<ReadonlyArray<KeySighting | null>>;

/** Taken when a check is sent; a reply whose snapshot is stale (the key was restarted since) is ignored. */
export interface CheckSnapshot {
  readonly cursor: StreamId;
  readonly epoch: number;
  /** The read entry whose presence the check asks about: the key's witness, else the cursor. */
  readonly probe: StreamId;
  /** Order of sending: replies to checks of one key may come back out of order (a cluster node slow to answer). */
  readonly seq: number;
}
