import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { envBool, parseEnv } from '@streamgate/boot';
import { serveDashboard } from '@streamgate/dashboard/server';
import { OPS_STALE_AFTER_MS } from '@streamgate/ops';
import type { DashboardServer } from '@streamgate/dashboard/server';
import { freePort, repoRoot, startChromium, waitFor } from '@streamgate/testkit';
import type { ChromiumBrowser } from '@streamgate/testkit';
import { binomialTolerance } from '../support/binomialTolerance.js';
import { cardOf, readDashboard, requireCard as card, saveDashboardScreenshot, untilDashboard } from '../support/readDashboard.js';
import type { DashboardView } from '../support/readDashboard.js';
import { FULL_FLEET_VENUE, startFullFleet } from '@streamgate/fleet';
import type { FullFleet } from '@streamgate/fleet';

// The operations dashboard on the real system: the full fleet (packages/fleet/src/startFullFleet.ts:
// two relays behind a front door, auth with an operator credential, anvil behind the fault
// proxies `primary` and `secondary`, an ingest worker on the chain and the simulated venue,
// viewers), every app publishing its own snapshots, the page served by serveDashboard and read
// in headless Chromium. Nothing on the stream is the test's: what the page shows is what the
// processes reported, and each step is asserted from the page's DOM.

const VIEWERS = 100;
/** Short, so the test watches a whole drain; long enough for several snapshots (one a second) along it. */
const DRAIN_WINDOW_MS = 8_000;
/**
 * Each connection of the drained pod gets an independent uniform delay in [0, window), so at a
 * fraction f of the window its connections left are Binomial(N, 1 − f) around the schedule
 * N·(1 − f). One sample may stray by binomialTolerance(N, 1 − f, ALPHA) (N ≈ 50: 15 connections
 * mid-window, fewer near the ends); over the ≤ 12 samples of a drain, a correct drain fails
 * with probability under 12 · 1e-5 (union bound).
 */
const ALPHA_PER_SAMPLE = 1e-5;
/** The schedule the page shows is rounded (½), and a close is counted when its socket has closed (a few ms late). */
const SLACK = 2;
const ARTIFACTS = join(repoRoot(), 'test', 'browser', 'artifacts');
const DOCS_SCREENSHOT = join(repoRoot(), 'docs', 'dashboard.png');

// Opt-in: a normal run leaves the tracked picture alone; STREAMGATE_WRITE_SCREENSHOT=1 retakes it.
const env = parseEnv(z.object({ STREAMGATE_WRITE_SCREENSHOT: envBool({ fallback: false }) }), process.env, { app: 'dashboard fleet test' });
if (!env.ok) throw new Error(env.error.message);
const WRITE_DOCS_SCREENSHOT = env.config.STREAMGATE_WRITE_SCREENSHOT;
/** For the README's picture only: charts with some history (about a point a second) before the drain. */
const DOCS_HISTORY_POINTS = 45;

let fleet: FullFleet | undefined;
let dashboard: DashboardServer | undefined;
let browser: ChromiumBrowser | undefined;
const fleetLog: string[] = [];
const pageErrors: string[] = [];

function ready(): { page: Page; fleet: FullFleet; dashboard: DashboardServer } {
  if (fleet === undefined || dashboard === undefined || browser === undefined) throw new Error('beforeAll did not finish');
  return { page: browser.page, fleet, dashboard };
}

/** Waits until the page shows what `check` wants; at the deadline fails with what it showed. */
function untilPage(page: Page, what: string, timeoutMs: number, check: (view: DashboardView) => boolean): Promise<DashboardView> {
  return untilDashboard(
    page,
    {
      what,
      timeoutMs,
      intervalMs: 100,
      context: () => `page errors: ${JSON.stringify(pageErrors)}\nfleet log:\n${fleetLog.slice(-40).join('\n')}`,
    },
    check,
  );
}

const figure = (view: DashboardView, pod: string, field: string) => Number(cardOf(view, pod)?.fields[field]);

const screenshot = (page: Page, name: string): Promise<string> => saveDashboardScreenshot(page, ARTIFACTS, name);

/** What the fleet's viewers hold, plus the page's own connection and its one subscription (the ops stream). */
const TOTAL_CONNECTIONS = VIEWERS + 1;
// startFullFleet: viewer 0 watches heads, logs and the six venue symbols; every other one heads and one symbol.
const TOTAL_SUBSCRIPTIONS = 2 + 6 + (VIEWERS - 1) * 2 + 1;

beforeAll(async () => {
  // The page's origin must be in auth's CORS before the page is served.
  const dashboardPort = await freePort();
  fleet = await startFullFleet({
    corsOrigins: [`http://127.0.0.1:${dashboardPort}`],
    viewers: VIEWERS,
    drainWindowMs: DRAIN_WINDOW_MS,
    log: (line) => fleetLog.push(line),
  });
  dashboard = await serveDashboard({ port: dashboardPort, config: { authUrl: fleet.authUrl, relayUrl: fleet.relayUrl } });
  browser = await startChromium({ viewport: { width: 1400, height: 900 } });
  browser.page.on('pageerror', (error) => pageErrors.push(error.message));
}, 90_000);

afterEach(async ({ task }) => {
  if (task.result?.state === 'fail' && browser !== undefined) await screenshot(browser.page, 'dashboard-fleet-failed.png');
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await fleet?.stop();
});

// The steps run in order on one page and one fleet, as an operator would watch them.
describe('the operations dashboard on the full fleet', () => {
  it('refuses a wrong operator credential (the real auth says UNAUTHORIZED) and asks for it', async () => {
    const { page, dashboard } = ready();
    await page.goto(`${dashboard.url}#credential=${encodeURIComponent('not-the-operator-credential')}`, { timeout: 20_000 });
    const refused = await untilPage(
      page,
      'the page never showed the refusal of a wrong credential',
      15_000,
      (v) => v.credentialRefused !== null && v.feedState === 'idle',
    );
    expect(refused.credentialRefused).toContain('refused');
    expect(refused.cards).toEqual([]);
  });

  it('shows both relays, auth and the ingest worker live with the figures the fleet produces', async () => {
    const { page, dashboard, fleet } = ready();
    // A new document: a fragment change alone would not reload the page.
    await page.goto('about:blank', { timeout: 5_000 });
    await page.goto(`${dashboard.url}#credential=${encodeURIComponent(fleet.credential)}`, { timeout: 20_000 });
    const heads = fleet.streams.heads;
    const logs = fleet.streams.logs;
    const view = await untilPage(
      page,
      'the page never showed the whole fleet live with every viewer connected and ingest serving',
      40_000,
      (v) => {
        const ingest = cardOf(v, 'ingest-0');
        const chain = (stream: string) => ingest?.chains.find((c) => c.stream === stream)?.fields;
        const venue = ingest?.venues.find((x) => x.venue === FULL_FLEET_VENUE);
        return (
          v.feedState === 'live' &&
          ['relay-0', 'relay-1', 'auth', 'ingest-0'].every((pod) => cardOf(v, pod)?.state === 'live') &&
          figure(v, 'relay-0', 'connections') + figure(v, 'relay-1', 'connections') === TOTAL_CONNECTIONS &&
          figure(v, 'relay-0', 'subscriptions') + figure(v, 'relay-1', 'subscriptions') === TOTAL_SUBSCRIPTIONS &&
          figure(v, 'relay-0', 'deliveriesPerSecond') > 0 &&
          figure(v, 'relay-1', 'deliveriesPerSecond') > 0 &&
          // The page's own token is counted by the auth snapshot after the one it may first show.
          figure(v, 'auth', 'tokensIssuedTotal') >= 1 &&
          [heads, logs].every(
            (s) => chain(s)?.state === 'active' && chain(s)?.provider === 'primary' && Number(chain(s)?.lastWritten) > 0,
          ) &&
          venue?.coverage.any === 6
        );
      },
    );
    expect(view.feedError).toBeNull();
    expect(view.badEntries).toBe(0);
    expect(view.feedPositionLabel).toBe('stream position (last entry id)');
    expect(view.feedPosition).toMatch(/^\d+-\d+$/);
    // Booleans read yes / no everywhere, attributes included.
    expect(view.trueFalseAttributes).toEqual([]);
    expect(view.cards.map((c) => `${c.kind}:${c.pod}`)).toEqual(['relay:relay-0', 'relay:relay-1', 'auth:auth', 'ingest:ingest-0']);

    // Round robin at the front door: the connections are split about evenly, and each pod reads
    // the one fleet Redis.
    for (const pod of ['relay-0', 'relay-1']) {
      const relay = card(view, pod);
      expect(relay.fields.ready, pod).toBe('yes');
      expect(Number(relay.fields.connections), pod).toBeGreaterThanOrEqual(VIEWERS / 2 - 2);
      expect(Number(relay.fields.streamsWatched), pod).toBeGreaterThanOrEqual(2);
      // The fleet's Redis notifies (Kt): the relays read woken keys, and the page says so.
      expect(relay.readModes, pod).toEqual({ [new URL(fleet.redisUrl).host + '/0']: 'notify' });
      expect(relay.fields.drainConnectionsLeft, pod).toBeUndefined();
    }
    const auth = card(view, 'auth');
    expect(auth.fields.ready).toBe('yes');
    expect(auth.fields.signingKeyIds).toBe(fleet.signingKey.kid);
    // The refused credential of the first step and the page's token since.
    expect(auth.refusals.UNAUTHORIZED).toBeGreaterThanOrEqual(1);
    expect(Number(auth.fields.tokensIssuedTotal)).toBeGreaterThanOrEqual(1);

    const ingest = card(view, 'ingest-0');
    expect(Number(ingest.fields.leasesHeld)).toBeGreaterThanOrEqual(2);
    for (const stream of [heads, logs]) {
      const row = ingest.chains.find((c) => c.stream === stream)?.fields;
      expect(row, stream).toMatchObject({ chain: 'anvil', state: 'active', provider: 'primary', failovers: '0', gaps: '0' });
      expect(Number(row?.head), stream).toBeGreaterThanOrEqual(Number(row?.lastWritten));
    }
    // Six wanted symbols at four per session: two sessions, all connected, all six covered.
    const venue = ingest.venues.find((v) => v.venue === FULL_FLEET_VENUE);
    expect(venue?.wanted).toBe('6');
    expect(venue?.sessions).toHaveLength(2);
    expect(venue?.sessions.map((s) => s.connected)).toEqual(['yes', 'yes']);
    expect(venue?.sessions.reduce((n, s) => n + s.symbols, 0)).toBe(6);
    for (const chart of ['chart-deliveries', 'chart-connections']) expect(view.charts[chart]?.series).toEqual(['relay-0', 'relay-1']);
  });

  it('after SIGTERM to relay-0 shows it draining along the uniform schedule to 0, and relay-1 taking its connections', async () => {
    const { page, fleet } = ready();
    if (WRITE_DOCS_SCREENSHOT)
      await untilPage(page, 'the charts never drew the history the README picture waits for', DOCS_HISTORY_POINTS * 1_000 + 20_000, (v) =>
        ['chart-deliveries', 'chart-connections'].every((c) => (v.charts[c]?.points ?? 0) >= DOCS_HISTORY_POINTS),
      );
    const before = await readDashboard(page);
    const heldBefore = figure(before, 'relay-0', 'connections');
    const otherBefore = figure(before, 'relay-1', 'connections');
    expect(await fleet.drainRelay('relay-0')).toMatchObject({ ok: true });

    /** One per relay-0 snapshot the page showed during the drain (by seq). */
    const samples = new Map<number, { elapsedS: number; left: number; schedule: number; atStart: number }>();
    const otherSeen: number[] = [];
    const record = (v: DashboardView) => {
      const drained = cardOf(v, 'relay-0');
      const other = figure(v, 'relay-1', 'connections');
      if (otherSeen.at(-1) !== other) otherSeen.push(other);
      if (drained?.fields.drainConnectionsLeft === undefined) return;
      samples.set(Number(drained.fields.seq), {
        // "3.2 s / 8.0 s"
        elapsedS: Number.parseFloat(drained.fields.drainElapsed ?? 'NaN'),
        left: Number(drained.fields.drainConnectionsLeft),
        schedule: Number(drained.fields.drainScheduleLeft),
        atStart: Number(drained.fields.drainConnectionsAtStart),
      });
    };
    const midway = await untilPage(page, 'relay-0 never showed as draining halfway through its window', DRAIN_WINDOW_MS + 5_000, (v) => {
      record(v);
      const drained = cardOf(v, 'relay-0');
      return drained?.state === 'draining' && Number.parseFloat(drained.fields.drainElapsed ?? '0') >= DRAIN_WINDOW_MS / 2_000;
    });
    const shot = await screenshot(page, 'dashboard-fleet-draining.png');
    if (WRITE_DOCS_SCREENSHOT) await copyFile(shot, DOCS_SCREENSHOT);
    expect(midway.charts['relay-0/drain-chart']?.series).toEqual(['schedule', 'connections']);
    expect(card(midway, 'relay-1').state).toBe('live');
    expect(card(midway, 'relay-0').drainActive).toBe('yes');

    // The drain ends at 0 (relay-0's last snapshot, published as it exits) and relay-1 holds every connection.
    const end = await untilPage(page, 'relay-0 never reached 0 with relay-1 holding every connection', DRAIN_WINDOW_MS + 10_000, (v) => {
      record(v);
      return cardOf(v, 'relay-0')?.fields.drainConnectionsLeft === '0' && figure(v, 'relay-1', 'connections') === TOTAL_CONNECTIONS;
    });
    await waitFor(() => fleet.relay('relay-0')?.state === 'exited', { timeoutMs: 10_000, message: 'relay-0 never exited after draining' });
    expect(fleetLog).toContain('relay-0 exited (code 0) after draining');

    // Its last snapshot said how the drain ended: drained, and still drained once it has been
    // silent for longer than a dead pod takes to turn stale.
    await untilPage(page, 'relay-0 never showed as drained after its exit', 10_000, (v) => cardOf(v, 'relay-0')?.state === 'drained');
    const relay0States = new Set<string>();
    const gone = await untilPage(page, 'relay-0 never stayed silent past the stale limit', OPS_STALE_AFTER_MS + 10_000, (v) => {
      relay0States.add(cardOf(v, 'relay-0')?.state ?? '(no card)');
      return figure(v, 'relay-0', 'age') > OPS_STALE_AFTER_MS / 1_000;
    });
    expect([...relay0States]).toEqual(['drained']);
    const exited = card(gone, 'relay-0');
    expect(exited.drainActive).toBe('no');
    expect(exited.fields).toMatchObject({
      state: 'drained',
      drainOutcome: 'drained',
      drainConnectionsLeft: '0',
      connections: '0',
      ready: 'no',
    });
    expect(gone.trueFalseAttributes).toEqual([]);

    const drawn = [...samples.entries()].sort(([a], [b]) => a - b).map(([, s]) => s);
    const atStart = drawn[0]?.atStart ?? NaN;
    // The drain began with the connections the page showed relay-0 holding just before.
    expect(atStart).toBe(heldBefore);
    expect(drawn.every((s) => s.atStart === atStart)).toBe(true);
    // About a snapshot a second along the window; the page may merge one or two while it reconnects.
    expect(drawn.filter((s) => s.elapsedS > 0 && s.elapsedS < DRAIN_WINDOW_MS / 1_000).length).toBeGreaterThanOrEqual(
      DRAIN_WINDOW_MS / 1_000 - 3,
    );
    const strays = drawn.map((s) => {
      const f = Math.min(s.elapsedS / (DRAIN_WINDOW_MS / 1_000), 1);
      const tolerance = binomialTolerance(atStart, 1 - f, ALPHA_PER_SAMPLE) + SLACK;
      return { ...s, tolerance, within: Math.abs(s.left - s.schedule) <= tolerance };
    });
    console.log(`relay-0 drain as the page showed it (N=${atStart}): ${JSON.stringify(strays)}`);
    expect(strays.filter((s) => !s.within)).toEqual([]);
    // Never more left than at the start; never back up once down.
    for (let i = 1; i < drawn.length; i++) expect(drawn[i]?.left).toBeLessThanOrEqual(drawn[i - 1]?.left ?? Infinity);
    expect(drawn.at(-1)?.left).toBe(0);
    expect(card(end, 'relay-0').fields.connections).toBe('0');

    // relay-1 rose while relay-0 drained (not in one step at the end) to every connection.
    expect(otherSeen.at(-1)).toBe(TOTAL_CONNECTIONS);
    expect(otherSeen.filter((n) => n > otherBefore && n < TOTAL_CONNECTIONS).length).toBeGreaterThanOrEqual(3);
    expect(card(end, 'relay-1').state).toBe('live');
  });

  it("after a cut of provider primary shows the chain streams' failover to secondary", async () => {
    const { page, fleet } = ready();
    expect(fleet.cutProvider('primary')).toMatchObject({ ok: true });
    const heads = fleet.streams.heads;
    const statesSeen = new Set<string>();
    const view = await untilPage(page, 'the heads stream never showed a failover to secondary', 30_000, (v) => {
      const row = cardOf(v, 'ingest-0')?.chains.find((c) => c.stream === heads)?.fields;
      if (row?.state !== undefined) statesSeen.add(`${row.state}@${row.provider ?? ''}`);
      return row?.state === 'active' && row.provider === 'secondary' && Number(row.failovers) >= 1;
    });
    console.log(`heads stream states the page showed after the cut: ${[...statesSeen].join(' → ')}`);
    const row = card(view, 'ingest-0').chains.find((c) => c.stream === heads)?.fields;
    expect(Number(row?.failovers)).toBeGreaterThanOrEqual(1);
    expect(row?.provider).toBe('secondary');
    // Still written to after the switch: the worker follows the chain on the other provider.
    const writtenAtFailover = Number(row?.lastWritten);
    await untilPage(
      page,
      'the heads stream wrote no block on secondary',
      10_000,
      (v) => Number(cardOf(v, 'ingest-0')?.chains.find((c) => c.stream === heads)?.fields.lastWritten) > writtenAtFailover,
    );
    await screenshot(page, 'dashboard-fleet-end.png');
    expect(pageErrors).toEqual([]);
  });
});
