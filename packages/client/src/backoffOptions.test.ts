import { describe, expect, it } from 'vitest';
import { resolveDelayBounds } from './backoffOptions.js';

describe('backoff options', () => {
  it('uses 250 ms / 30 s by default and refuses nonsense', () => {
    expect(resolveDelayBounds(undefined)).toEqual({ baseMs: 250, maxMs: 30_000 });
    expect(resolveDelayBounds({ baseMs: 100 })).toEqual({ baseMs: 100, maxMs: 30_000 });
    expect(() => resolveDelayBounds({ baseMs: 0 })).toThrow(RangeError);
    expect(() => resolveDelayBounds({ baseMs: Number.NaN })).toThrow(RangeError);
    expect(() => resolveDelayBounds({ baseMs: 100, maxMs: 50 })).toThrow(RangeError);
  });
});
