import { describe, expect, it } from 'vitest';
import { judgeSighting } from './judgeSighting.js';
import type { KeyState } from './judgeSighting.js';
import type { CheckSnapshot, KeySighting } from './KeySighting.js';

const fresh = (over: Partial<KeyState> = {}): KeyState => ({
  existed: false,
  vanished: false,
  entriesAdded: null,
  epoch: 0,
  witness: null,
  seen: 0,
  ...over,
});
const at = (cursor: string): CheckSnapshot => ({ cursor, epoch: 0, probe: cursor, seq: 1 });
const present = (over: Partial<Extract<KeySighting, { exists: true }>> = {}): KeySighting => ({
  exists: true,
  lastGeneratedId: '50-0',
  entriesAdded: 3,
  cursorStored: false,
  firstEntryId: '40-0',
  maxDeletedEntryId: '0-0',
  length: 3,
  ...over,
});

describe('judgeSighting', () => {
  it('takes a key the reader read from as existing, though no look saw it before it went', () => {
    // Missing when the reader began (cursor 0-0 then), written and read up to 3-0, then deleted.
    const state = fresh();
    expect(judgeSighting(state, at('3-0'), { exists: false })).toBeNull();
    expect(state.vanished).toBe(true);
    expect(judgeSighting(state, at('3-0'), present())).toBe('recreated');
  });

  it('still takes a key never read from, missing then created, as its first incarnation', () => {
    const state = fresh();
    expect(judgeSighting(state, at('0-0'), { exists: false })).toBeNull();
    expect(state.vanished).toBe(false);
    expect(judgeSighting(state, at('0-0'), present({ firstEntryId: '1-0' }))).toBeNull();
  });

  it('sees a stream that never held the entry read: nothing ever removed, every entry above the position', () => {
    // Deleted and written again (3 entries, later ids) between two looks, with no baseline.
    expect(judgeSighting(fresh({ existed: true }), at('30-0'), present())).toBe('recreated');
    // An empty new incarnation (XGROUP CREATE … MKSTREAM after a DEL).
    expect(judgeSighting(fresh({ existed: true }), at('30-0'), present({ entriesAdded: 0, length: 0, firstEntryId: null }))).toBe(
      'recreated',
    );
  });

  it('does not take a trim, an XDEL or a reader behind the writes for a new incarnation', () => {
    // Trimmed past the position: entries-added counts what left.
    expect(judgeSighting(fresh({ existed: true }), at('30-0'), present({ entriesAdded: 9 }))).toBeNull();
    // The position still stored, or entries at and below it still there.
    expect(judgeSighting(fresh({ existed: true }), at('30-0'), present({ cursorStored: true, firstEntryId: '30-0' }))).toBeNull();
    expect(judgeSighting(fresh({ existed: true }), at('45-0'), present({ cursorStored: true }))).toBeNull();
    // Before Redis 7 nothing is counted: the rule does not apply.
    expect(judgeSighting(fresh({ existed: true }), at('30-0'), present({ entriesAdded: null }))).toBeNull();
  });
});
