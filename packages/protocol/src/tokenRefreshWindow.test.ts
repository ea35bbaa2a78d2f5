import { describe, expect, it } from 'vitest';
import { tokenRefreshDelayMs, tokenRefreshWindow } from './tokenRefreshWindow.js';

describe('tokenRefreshWindow', () => {
  it('spans the third of the lifetime that closes the lead before exp', () => {
    // 15-minute token, 30 s lead: renew between exp - 5.5 min and exp - 30 s.
    expect(tokenRefreshWindow({ iatSeconds: 1000, expSeconds: 1900, leadSeconds: 30 })).toEqual({
      startMs: 1_870_000 - 300_000,
      endMs: 1_870_000,
    });
  });

  it('caps the lead at half the lifetime and never opens before iat', () => {
    // 40 s token, 30 s lead: the lead becomes 20 s, the window [iat + 6.67 s, iat + 20 s].
    const w = tokenRefreshWindow({ iatSeconds: 0, expSeconds: 40, leadSeconds: 30 });
    expect(w.endMs).toBe(20_000);
    expect(w.startMs).toBeCloseTo(20_000 - 40_000 / 3, 6);
    expect(tokenRefreshWindow({ iatSeconds: 0, expSeconds: 0, leadSeconds: 30 })).toEqual({ startMs: 0, endMs: 0 });
  });
});

describe('tokenRefreshDelayMs', () => {
  const lifetime = { iatSeconds: 1000, expSeconds: 1900, leadSeconds: 30 };

  it('draws uniformly over the window for a fresh token', () => {
    expect(tokenRefreshDelayMs(lifetime, 1_000_000, () => 0)).toBe(570_000);
    expect(tokenRefreshDelayMs(lifetime, 1_000_000, () => 0.5)).toBe(720_000);
    expect(tokenRefreshDelayMs(lifetime, 1_000_000, () => 1)).toBe(870_000);
  });

  it('draws over what is left when the token arrives inside the window, 0 once it has closed', () => {
    expect(tokenRefreshDelayMs(lifetime, 1_800_000, () => 0.5)).toBe(35_000);
    expect(tokenRefreshDelayMs(lifetime, 1_880_000, () => 0.5)).toBe(0);
  });
});
