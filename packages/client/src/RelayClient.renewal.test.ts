import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenRefreshWindow } from '@streamgate/protocol';
import { scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import { TOKEN_RENEW_MARGIN_MS } from './tokens.js';

const { relay, client } = scriptedFixtures(RelayClient);
const LIFETIME_MS = 600_000;
const T0 = Date.UTC(2030, 0, 1);

afterEach(() => {
  vi.useRealTimers();
});

/**
 * Subscribes with a token received at T0 (ten minutes long unless told), moves the clock to
 * `elapsedMs` after T0, drops the socket and returns the token the resubscribe used and how many
 * tokens were asked for.
 */
async function resubscribeAfter(elapsedMs: number, draw: number, lifetimeMs = LIFETIME_MS): Promise<{ token: string; calls: number }> {
  // Only Date is faked, and it keeps ticking: sockets and timers run for real.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(T0);
  const r = await relay();
  const c = client([r.url], { random: () => draw });
  let calls = 0;
  const sub = c.subscribe({
    getToken: () => Promise.resolve(tokenFor<Tick>(STREAM, `jwt-${++calls}`, calls === 1 ? lifetimeMs : LIFETIME_MS)),
    onEvent: () => undefined,
  });
  const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
  expect(first.token).toBe('jwt-1');
  r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: (T0 + lifetimeMs) / 1000 });
  await waitForValue('live', () => sub.state === 'live');

  vi.setSystemTime(T0 + elapsedMs);
  r.sockets[0]?.terminate();
  const again = await waitForValue('resubscribe', () => r.frames('subscribe', 1)[0]);
  return { token: again.token, calls };
}

describe('RelayClient renewal before a resubscribe', () => {
  // 600 s token, 30 s lead: the window is [T0 + 370 s, T0 + 570 s].
  const window = tokenRefreshWindow({
    iatSeconds: T0 / 1000,
    expSeconds: (T0 + LIFETIME_MS) / 1000,
    leadSeconds: TOKEN_RENEW_MARGIN_MS / 1000,
  });

  it('renews a token whose drawn moment in the window has passed, though far from expiry', async () => {
    expect(window.startMs - T0).toBe(370_000);
    // Drawn at the start of the window; 200 s of life are left, well beyond the 30 s lead.
    const { token, calls } = await resubscribeAfter(window.startMs - T0 + 10_000, 0);
    expect(token).toBe('jwt-2');
    expect(calls).toBe(2);
  });

  it('keeps a token whose drawn moment has not come yet', async () => {
    // Drawn at the end of the window (T0 + 570 s): at T0 + 560 s it is kept.
    const { token, calls } = await resubscribeAfter(window.endMs - T0 - 10_000, 1);
    expect(token).toBe('jwt-1');
    expect(calls).toBe(1);
  });

  it('spreads the renewal moment with the draw: halfway through the window for 0.5', async () => {
    const halfway = (window.startMs + window.endMs) / 2 - T0;
    expect((await resubscribeAfter(halfway - 5_000, 0.5)).token).toBe('jwt-1');
    vi.useRealTimers();
    expect((await resubscribeAfter(halfway + 5_000, 0.5)).token).toBe('jwt-2');
  });

  it('still renews a short-lived token that expires within the lead, whatever the draw', async () => {
    // A 40 s token's lead is capped at 20 s, so a late draw falls at T0 + 20 s; at T0 + 12 s it
    // has 28 s left, under the 30 s that a resubscribe needs.
    const { token } = await resubscribeAfter(12_000, 1, 40_000);
    expect(token).toBe('jwt-2');
  });
});
