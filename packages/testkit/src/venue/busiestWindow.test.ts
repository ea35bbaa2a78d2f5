import { describe, expect, it } from 'vitest';
import { busiestWindow } from './busiestWindow.js';

describe('busiestWindow', () => {
  it('counts the most times any window of the length holds, in any order', () => {
    expect(busiestWindow([], 1_000)).toBe(0);
    expect(busiestWindow([2_500, 0, 999, 1_000, 1_999], 1_000)).toBe(2);
    expect(busiestWindow([1_200, 0, 500, 999], 1_000)).toBe(3);
    // A window is [t, t + ms): the end is outside it.
    expect(busiestWindow([0, 1_000], 1_000)).toBe(1);
  });
});
