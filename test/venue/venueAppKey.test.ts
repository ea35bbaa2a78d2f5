import { describe, expect, it } from 'vitest';
import { RateLimiter, VenueFeed, VenueHttpClient } from '@streamgate/ingest';
import { waitFor } from '@streamgate/testkit';
import type { VenueSim, VenueSimRefusedConnect } from '@streamgate/testkit';
import { ALL_KINDS, APP_KEY, startVenueHarness, symbols } from '../support/venueHarness.js';

const TICK_MS = 400;
const OTHER_KEY = 'other-app-key';

/** A feed on OTHER_KEY at the same venue, which must not notice what happens to APP_KEY. */
function startOtherKeyFeed(sim: VenueSim): VenueFeed {
  const feed = new VenueFeed({
    venue: 'other',
    mqttUrl: sim.mqttUrl,
    appKey: OTHER_KEY,
    http: new VenueHttpClient({ baseUrl: sim.httpUrl, appKey: OTHER_KEY, limiter: new RateLimiter({ perSecond: 200, burst: 50 }) }),
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
  feed.start();
  return feed;
}

type LogLine = { level: string; obj: Record<string, unknown>; msg: string };

/** The harness's feed on APP_KEY, at a venue that also knows OTHER_KEY, with every log line it writes kept. */
async function startTwoKeyHarness() {
  const lines: LogLine[] = [];
  const record = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
  const harness = await startVenueHarness({
    sim: { appKeys: [APP_KEY, OTHER_KEY] },
    feed: {
      reassertIntervalMs: TICK_MS,
      callTimeoutMs: 3_000,
      log: { info: record('info'), warn: record('warn'), error: record('error') },
    },
  });
  return { lines, harness };
}

describe('venue answers INVALID_APP_KEY over HTTP', () => {
  it('ends the work on that key with one typed, final error, reported once, while another key keeps working', async () => {
    const { lines, harness } = await startTwoKeyHarness();
    await using h = harness;
    const other = startOtherKeyFeed(h.sim);
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

/** CONNECTs the venue refused for `appKey` (the sim records the username each one sent). */
function refusedFor(sim: VenueSim, appKey: string): VenueSimRefusedConnect[] {
  return sim.refusedConnects().filter((r) => r.appKey === appKey);
}

describe('venue refuses CONNECTs of the app key', () => {
  it('return code 4 ends the work on that key like an HTTP refusal: one final error, no more dials or calls, another key untouched', async () => {
    const { lines, harness } = await startTwoKeyHarness();
    await using h = harness;
    const other = startOtherKeyFeed(h.sim);
    try {
      expect(await h.feed.subscribe(symbols(150))).toEqual({ ok: true });
      expect(await other.subscribe(symbols(20, 0, 'T'))).toEqual({ ok: true });
      await waitFor(() => h.feed.covered().size === 150, { timeoutMs: 8_000, message: 'the key covered on two sessions' });
      const sessions = h.sim.sessions().filter((s) => s.appKey === APP_KEY);
      expect(sessions).toHaveLength(2);

      // The MQTT side refuses the key while its HTTP side would still take it, so only a CONNECT
      // can tell the feed: one session is dropped and its redial is refused.
      h.sim.refuseConnects(APP_KEY, 4);
      expect(h.sim.dropSession(sessions[0]?.id ?? '')).toBe(true);
      await waitFor(() => h.notices.some((n) => n.type === 'app_key_refused'), {
        timeoutMs: 8_000,
        message: 'no app_key_refused after the CONNECT was refused with return code 4',
      });
      const refusedAt = Date.now();
      expect(refusedFor(h.sim, APP_KEY).map((r) => r.returnCode)).toEqual([4]);
      expect(await h.feed.subscribe(['S200'])).toMatchObject({
        ok: false,
        error: { code: 'app_key_refused', retryable: false, venue: 'sim' },
      });
      await waitFor(() => !h.sim.sessions().some((s) => s.appKey === APP_KEY), {
        timeoutMs: 5_000,
        message: "the refused key's other session closed",
      });
      const keyCalls = () => h.sim.calls().filter((c) => c.appKey === APP_KEY).length;
      const calls = keyCalls();
      // Longer than several redial backoffs (500 ms doubling) and re-assert ticks: nothing more.
      await waitFor(() => Date.now() - refusedAt >= 8 * TICK_MS && other.covered().size === 20, {
        timeoutMs: 10_000,
        message: 'eight ticks with the other key still covered',
      });
      expect(refusedFor(h.sim, APP_KEY)).toHaveLength(1);
      expect(keyCalls()).toBe(calls);
      expect(h.notices.filter((n) => n.type === 'app_key_refused')).toHaveLength(1);
      // Final, so not also the notice of a refusal that keeps redialling.
      expect(h.notices.filter((n) => n.type === 'session_refused')).toEqual([]);
      const logged = lines.filter((l) => l.level === 'error' && l.obj.code === 'app_key_refused');
      expect(logged).toHaveLength(1);
      expect(JSON.stringify([h.notices, logged])).not.toContain(APP_KEY);
      expect(h.sim.sessions().filter((s) => s.appKey === OTHER_KEY && s.connected)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  // Not about the key: 3 (server unavailable) and 5 (this venue's answer to a key's sixth session)
  // clear by themselves and are redialled quietly; 2 (client id) is redialled with one notice.
  it.each([
    { returnCode: 3, sessionRefused: 0 },
    { returnCode: 5, sessionRefused: 0 },
    { returnCode: 2, sessionRefused: 1 },
  ])(
    'return code $returnCode keeps redialling and the session connects once the venue takes it',
    async ({ returnCode, sessionRefused }) => {
      await using h = await startVenueHarness({ feed: { reassertIntervalMs: TICK_MS, callTimeoutMs: 3_000 } });
      h.sim.refuseConnects(APP_KEY, returnCode);
      expect(await h.feed.subscribe(symbols(5))).toMatchObject({ ok: false, error: { code: 'connack_timeout', retryable: true } });
      await waitFor(() => refusedFor(h.sim, APP_KEY).length >= 3, { timeoutMs: 10_000, message: 'three refused CONNECTs' });
      expect(h.notices.filter((n) => n.type === 'app_key_refused')).toEqual([]);
      expect(h.notices.filter((n) => n.type === 'session_refused')).toHaveLength(sessionRefused);

      h.sim.refuseConnects(APP_KEY, null);
      await waitFor(() => h.feed.covered().size === 5, { timeoutMs: 20_000, message: 'covered once CONNECTs were accepted' });
      expect(h.feed.status().appKeyRefused).toBe(false);
    },
  );
});
