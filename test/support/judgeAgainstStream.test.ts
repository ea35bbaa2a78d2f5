import { describe, expect, it } from 'vitest';
import { judgeAgainstStream } from './judgeAgainstStream.js';
import type { Received } from './judgeAgainstStream.js';

const got = (...parts: string[]): Received => ({
  items: parts.map((p) =>
    p === 'R' ? { kind: 'notice', notice: 'stream_reset' } : p === 'T' ? { kind: 'notice', notice: 'truncated' } : { kind: 'event', id: p },
  ),
});
const final = ['1-0', '2-0', '3-0', '5-0'];

describe('judgeAgainstStream', () => {
  it('accepts a contiguous run to the end, and anything before a notice followed by the whole stream', () => {
    expect(judgeAgainstStream(got('2-0', '3-0', '5-0'), final)).toEqual({ outcome: 'whole', problem: null });
    expect(judgeAgainstStream(got('2-0', '3-0', '4-0', '6-0', 'R', '1-0', '2-0', '3-0', '5-0'), final)).toEqual({
      outcome: 'reset',
      problem: null,
    });
  });

  it('names a silent loss, an entry the stream lost with no notice after it, a short or misplaced restart', () => {
    expect(judgeAgainstStream(got('2-0', '5-0'), final).problem).toBe('lacks 3-0 (got 5-0 next) and was not told');
    expect(judgeAgainstStream(got('2-0', '3-0', '4-0', '5-0'), final).problem).toBe(
      'holds 4-0, not in the final stream, with no notice after it',
    );
    expect(judgeAgainstStream(got('1-0', '2-0'), final).problem).toBe('lacks 2 entries at the end');
    expect(judgeAgainstStream(got('4-0', 'T', '2-0', '3-0', '5-0'), final)).toEqual({
      outcome: 'truncated',
      problem: 'after its notice it restarted at 2-0, not at the first entry',
    });
    expect(judgeAgainstStream(got('1-0', '2-0', '2-0', '3-0', '5-0'), final).problem).toBe('got 2-0 twice or out of order');
  });
});
