import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tokenRefreshDelayMs } from '@streamgate/protocol';
import type { RelaySubscription } from '@streamgate/protocol';
import { StreamToken } from './StreamToken.js';
import type { RefreshContext } from './StreamToken.js';

const T0 = Date.UTC(2030, 0, 1);
const token = (value: string, lifetimeMs = 900_000): RelaySubscription<unknown> => ({
  token: value,
  stream: 'demo:ticks',
  expiresAt: Date.now() + lifetimeMs,
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('StreamToken', () => {
  it('is due at the moment tokenRefreshDelayMs draws, counted from when it arrived', () => {
    const t = new StreamToken(
      token('a'),
      () => undefined,
      () => 0.25,
    );
    const lifetime = { iatSeconds: T0 / 1000, expSeconds: T0 / 1000 + 900, leadSeconds: 30 };
    const expected = T0 + tokenRefreshDelayMs(lifetime, T0, () => 0.25);
    expect(t.renewAt).toBe(expected);
    // 15-minute token: window [exp - 5.5 min, exp - 30 s], a quarter of the way in.
    expect(expected - T0).toBe(570_000 + 0.25 * 300_000);
    expect(t.renewalDue(expected - 1)).toBe(false);
    expect(t.renewalDue(expected)).toBe(true);
  });

  it('spreads tokens minted in one burst over the whole window', () => {
    const moments = Array.from({ length: 1000 }, () => new StreamToken(token('a'), () => undefined).renewAt - T0);
    const start = 570_000;
    const end = 870_000;
    expect(Math.min(...moments)).toBeGreaterThanOrEqual(start);
    expect(Math.max(...moments)).toBeLessThanOrEqual(end);
    // Ten equal bins each hold about a tenth; 50 to 150 of 1,000 is far outside chance for uniform.
    const bins = new Array<number>(10).fill(0);
    for (const m of moments) {
      const bin = Math.min(9, Math.floor(((m - start) / (end - start)) * 10));
      bins[bin] = (bins[bin] ?? 0) + 1;
    }
    for (const count of bins) expect(count).toBeGreaterThan(50);
    for (const count of bins) expect(count).toBeLessThan(150);
  });

  it('draws a new moment for a new token and keeps it when the relay confirms the expiry', () => {
    const draws = [0, 1];
    const t = new StreamToken(
      token('a'),
      () => undefined,
      () => draws.shift() ?? 0.5,
    );
    expect(t.renewAt - T0).toBe(570_000);
    t.confirmExpiry(T0 / 1000 + 900);
    expect(t.renewAt - T0).toBe(570_000);
    t.offer(token('b', 1_200_000));
    expect(t.value).toBe('b');
    // 20-minute token, drawn at the end of its window: exp - 30 s.
    expect(t.renewAt - T0).toBe(1_170_000);
    t.offer(token('c', 60_000));
    expect(t.value).toBe('b');
  });

  it('shares one getToken call between renewals and answers refresh_token once until refreshed', async () => {
    let calls = 0;
    const sent: string[] = [];
    const t = new StreamToken(token('a'), () => () => Promise.resolve(token(`jwt-${++calls}`)));
    const ctx: RefreshContext = {
      isCurrent: () => true,
      send: (frame) => sent.push(frame.token) > 0,
      report: () => undefined,
      retryDelay: () => 0,
    };
    const renewal = t.renew();
    await Promise.all([t.refreshInPlace('s1', ctx), t.refreshInPlace('s1', ctx), renewal]);
    expect(calls).toBe(1);
    expect(sent).toEqual(['jwt-1']);
    expect(t.refreshing).toBe(true);
    t.refreshed(T0 / 1000 + 900);
    expect(t.refreshing).toBe(false);
    await t.refreshInPlace('s1', ctx);
    expect(sent).toEqual(['jwt-1', 'jwt-2']);
  });

  it('reports a token for another stream and does not adopt it', async () => {
    const errors: string[] = [];
    const t = new StreamToken(token('a'), () => () => Promise.resolve({ ...token('x'), stream: 'other' }));
    await t.refreshInPlace('s1', {
      isCurrent: () => true,
      send: () => true,
      report: (e) => errors.push(e.code),
      retryDelay: () => 0,
    });
    expect(errors).toEqual(['token_response_invalid']);
    expect(t.value).toBe('a');
    expect(t.refreshing).toBe(false);
  });
});
