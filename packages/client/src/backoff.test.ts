import { describe, expect, it } from 'vitest';
import { resolveBackoff } from './backoff.js';

describe('backoff options', () => {
  it('uses 250 ms / 30 s by default and refuses nonsense', () => {
    expect(resolveBackoff(undefined)).toEqual({ baseMs: 250, maxMs: 30_000 });
    expect(resolveBackoff({ baseMs: 100 })).toEqual({ baseMs: 100, maxMs: 30_000 });
    expect(() => resolveBackoff({ baseMs: 0 })).toThrow(RangeError);
    expect(() => resolveBackoff({ baseMs: Number.NaN })).toThrow(RangeError);
    expect(() => resolveBackoff({ baseMs: 100, maxMs: 50 })).toThrow(RangeError);
  });
});
