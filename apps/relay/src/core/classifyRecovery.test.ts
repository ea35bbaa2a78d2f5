import { describe, expect, it } from 'vitest';
import { classifyRecovery } from './classifyRecovery.js';
import type { StreamInfo } from './StreamSource.js';

const info = (over: Partial<StreamInfo>): StreamInfo => ({
  lastGeneratedId: '50-0',
  firstEntryId: '10-0',
  length: 41,
  entriesAdded: 41,
  maxDeletedEntryId: '0-0',
  ...over,
});

describe('classifyRecovery', () => {
  it('recovers from an id still in the stream, or from its last id', () => {
    expect(classifyRecovery('20-0', info({}), true)).toEqual({ recovery: 'recovered', after: '20-0' });
    expect(classifyRecovery('50-0', info({}), false)).toEqual({ recovery: 'recovered', after: '50-0' });
  });

  it('says truncated when the id was trimmed away; delivery goes on after it with the oldest retained entry', () => {
    expect(classifyRecovery('5-0', info({ entriesAdded: 100 }), false)).toEqual({ recovery: 'truncated', after: '5-0' });
    expect(classifyRecovery('0-0', info({ entriesAdded: 100 }), false)).toEqual({ recovery: 'truncated', after: '0-0' });
  });

  it('recovers from the very start when nothing was ever removed', () => {
    expect(classifyRecovery('0-0', info({}), false)).toEqual({ recovery: 'recovered', after: '0-0' });
    expect(classifyRecovery('0-0', null, false)).toEqual({ recovery: 'recovered', after: '0-0' });
  });

  it('says reset for ids of another incarnation: older than a never-trimmed stream, beyond its end, or of a deleted key', () => {
    expect(classifyRecovery('5-0', info({}), false)).toEqual({ recovery: 'reset', after: '0-0' });
    expect(classifyRecovery('60-0', info({}), false)).toEqual({ recovery: 'reset', after: '0-0' });
    expect(classifyRecovery('5-0', null, false)).toEqual({ recovery: 'reset', after: '0-0' });
    expect(classifyRecovery('20-5', info({}), false)).toEqual({ recovery: 'reset', after: '0-0' });
  });

  it('treats an id removed by XDEL inside the retained range as recovered', () => {
    expect(classifyRecovery('20-0', info({ entriesAdded: 42, maxDeletedEntryId: '30-0' }), false)).toEqual({
      recovery: 'recovered',
      after: '20-0',
    });
  });

  it('says truncated for 0-0 when head entries were deleted with XDEL: the same metadata as a trim', () => {
    // 1-0…5-0 written, 1-0 and 2-0 deleted with XDEL; a trim of 1-0 after XDEL 2-0 reads the same.
    const xdelOnly = { lastGeneratedId: '5-0', firstEntryId: '3-0', length: 3, entriesAdded: 5, maxDeletedEntryId: '2-0' };
    expect(classifyRecovery('0-0', xdelOnly, false)).toEqual({ recovery: 'truncated', after: '0-0' });
    expect(classifyRecovery('1-0', xdelOnly, false)).toEqual({ recovery: 'truncated', after: '1-0' });
    // Deleted inside the retained range: only XDEL can do that, so a resume from there lost nothing;
    // from 0-0, an entry before the oldest retained one may still have been trimmed.
    const xdelInside = { lastGeneratedId: '5-0', firstEntryId: '1-0', length: 3, entriesAdded: 5, maxDeletedEntryId: '3-0' };
    expect(classifyRecovery('2-0', xdelInside, false)).toEqual({ recovery: 'recovered', after: '2-0' });
    expect(classifyRecovery('0-0', xdelInside, false)).toEqual({ recovery: 'truncated', after: '0-0' });
  });
});
