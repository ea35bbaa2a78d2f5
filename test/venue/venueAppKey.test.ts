import { describe, expect, it } from 'vitest';
import { RateLimiter, VenueFeed, VenueHttpClient } from '@streamgate/ingest';
import { waitFor } from '@streamgate/testkit';
import { ALL_KINDS, APP_KEY, startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 400;
const OTHER_KEY = 'other-app-key';

describe('venue answers INVALID_APP_KEY over HTTP', () => {
  it('ends the work on that key with one typed, final error, reported once, while another key keeps working', async () => {
    const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const record = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
    await using h = await startVenueHarness({
      sim: { appKeys: [APP_KEY, OTHER_KEY] },
      feed: {
        reassertIntervalMs: TICK_MS,
        callTimeoutMs: 3_000,
        log: { info: record('info'), warn: record('warn'), error: record('error') },
      },
    });
    const other = new VenueFeed({
      venue: 'other',
      mqttUrl: h.sim.mqttUrl,
      appKey: OTHER_KEY,
      http: new VenueHttpClient({ baseUrl: h.sim.httpUrl, appKey: OTHER_KEY, limiter: new RateLimiter({ perSecond: 200, burst: 50 }) }),
      kinds: ALL_KINDS,
      maxSymbolsPerSession: 100,
      maxSessions: 5,
      reassertIntervalMs: TICK_MS,
      reconcileTimeoutMs: 5_000,
      callTimeoutMs: 3_000,
      rejectedSymbolTtlMs: 86_400_000,
      coverageStaleMs: 600,
      connectTimeoutMs: 2_000,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    other.start();
    try {
      expect(await h.feed.subscribe(symbols(30))).toEqual({ ok: true });
      expect(await other.subscribe(symbols(20, 0, 'T'))).toEqual({ ok: true });
      await waitFor(() => h.feed.covered().size === 30 && other.covered().size === 20, { timeoutMs: 8_000, message: 'both keys covered' });

      expect(h.sim.revokeAppKey(APP_KEY)).toBe(true);
      const answer = await h.feed.subscribe(['S100']);
      expect(answer).toMatchObject({ ok: false, error: { code: 'app_key_refused', retryable: false, venue: 'sim' } });
      const refusedAt = Date.now();
      const refusedCalls = () => h.sim.calls().filter((c) => c.appKey === APP_KEY && c.code === 'INVALID_APP_KEY').length;
      const callsThen = refusedCalls();
      expect(callsThen).toBeGreaterThan(0);

      // A later change is answered the same way at once, and asks the venue nothing.
      expect(await h.feed.subscribe(['S101'])).toMatchObject({ ok: false, error: { code: 'app_key_refused', retryable: false } });
      // Several ticks and retry backoffs later: nothing more was sent under the refused key, its
      // sessions are closed, and the other key's feed never noticed.
      await waitFor(() => Date.now() - refusedAt >= 5 * TICK_MS && other.covered().size === 20, {
        timeoutMs: 10_000,
        message: 'five ticks with the other key still covered',
      });
      expect(refusedCalls()).toBe(callsThen);
      await waitFor(() => !h.sim.sessions().some((s) => s.appKey === APP_KEY), {
        timeoutMs: 5_000,
        message: "the refused key's sessions closed",
      });
      expect(h.sim.sessions().filter((s) => s.appKey === OTHER_KEY && s.connected)).toHaveLength(1);

      const refusals = h.notices.filter((n) => n.type === 'app_key_refused');
      expect(refusals).toHaveLength(1);
      const logged = lines.filter((l) => l.level === 'error' && l.obj.code === 'app_key_refused');
      expect(logged).toHaveLength(1);
      // Named by venue, never by the secret.
      const said = JSON.stringify([answer, refusals, logged]);
      expect(said).not.toContain(APP_KEY);
      expect(said).toContain('sim');
    } finally {
      await other.close();
    }
  });
});
