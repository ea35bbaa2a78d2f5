import { describe, expect, it } from 'vitest';
import { OPS_STALE_AFTER_MS } from '@streamgate/ops';
import { waitFor } from '@streamgate/testkit';
import { authSnapshot, relaySnapshot } from '../support/opsSnapshots.js';
import { cardOf, readDashboard, requireCard as card } from '../support/readDashboard.js';
import {
  CREDENTIAL,
  DRAIN_WINDOW_MS,
  dashboard,
  door,
  pageErrors,
  pageOf,
  pageSockets,
  redis,
  screenshot,
  untilPage,
  useDashboardFixture,
  writer,
} from './dashboardFixture.js';
import { HISTORY_S, chain, goLive, ingestState, liveSince, relayA, relayAState, relayB, relayBState, sessions } from './dashboardPods.js';

// The operations dashboard (apps/dashboard), built and served by serveDashboard, in real headless
// Chromium: its token from the real auth service's ops.token with the operator credential, the
// operations stream through a real relay from a real Redis. The pods on the stream are the
// test's own: it writes schema-valid snapshots (through OpsSnapshotPublisher, as the apps do)
// for two relays, an auth service and an ingest worker, and steers them through a drain, a
// provider failover and a relay's exit after its drain, against another's death mid-drain,
// asserting each from the page's DOM.

useDashboardFixture();

// The steps run in order on one page, as an operator would watch one fleet.
describe('the operations dashboard in headless Chromium', () => {
  it('gets no token without the operator credential and asks for it; with it the stream goes live', async () => {
    const page = pageOf();
    await page.goto(`${dashboard?.url ?? ''}#credential=not-the-credential`, { timeout: 20_000 });
    // Refused, the page stops asking (idle) instead of retrying a credential that will never work.
    const refused = await untilPage(
      page,
      'the page never said the credential was refused',
      15_000,
      (v) => v.credentialRefused !== null && v.feedState === 'idle',
    );
    expect(refused.credentialRefused).toContain('refused');
    await page.fill('[data-testid="credential-input"]', CREDENTIAL, { timeout: 5_000 });
    await page.click('[data-testid="credential-submit"]', { timeout: 5_000 });
    const live = await untilPage(page, 'the operations stream never went live with the credential', 15_000, (v) => v.feedState === 'live');
    expect(live.credentialRefused).toBeNull();
    expect(live.feedError).toBeNull();
    // The header says what the id it shows is: a stream position, not a time.
    expect(live.feedPositionLabel).toBe('stream position (last entry id)');
  });

  it('shows both relays, the auth service and the ingest worker with their figures, and charts them', async () => {
    const page = pageOf();
    goLive();
    await writer?.start('relay-a', relayAState, { past: HISTORY_S });
    await writer?.start('relay-b', relayBState, { past: HISTORY_S });
    await writer?.start('auth-0', () =>
      authSnapshot('auth-0', { tokensIssuedTotal: 500, tokensPerSecond: 3, refusals: { UNAUTHORIZED: 2 }, signingKeyIds: ['k1'] }),
    );
    await writer?.start('ingest-0', ingestState);
    const view = await untilPage(
      page,
      "the page never showed the six pods live with the pretend relays' history",
      15_000,
      (v) =>
        v.cards.length === 6 &&
        v.cards.every((c) => c.state === 'live') &&
        (v.charts['chart-connections']?.points ?? 0) >= HISTORY_S + 1 &&
        // A snapshot of the real relay taken since the page subscribed and was delivered to.
        Number(cardOf(v, 'relay-real')?.fields.subscriptions) >= 1 &&
        Number(cardOf(v, 'relay-real')?.fields.deliveriesTotal) > 0 &&
        Number(cardOf(v, 'auth-real')?.fields.tokensIssuedTotal) >= 1,
    );
    // The position is the id of the last entry the page read (`<ms>-<seq>`, Redis's time of the
    // XADD): one the pretend pods wrote since they started.
    expect(view.feedPositionLabel).toBe('stream position (last entry id)');
    expect(view.feedPosition).toMatch(/^\d+-\d+$/);
    expect(Number(view.feedPosition?.split('-')[0])).toBeGreaterThanOrEqual(liveSince);
    expect(Number(view.feedPosition?.split('-')[0])).toBeLessThanOrEqual(Date.now());
    // Booleans read yes / no everywhere, attributes included.
    expect(view.trueFalseAttributes).toEqual([]);
    expect(view.cards.map((c) => `${c.kind}:${c.pod}`)).toEqual([
      'relay:relay-a',
      'relay:relay-b',
      'relay:relay-real',
      'auth:auth-0',
      'auth:auth-real',
      'ingest:ingest-0',
    ]);

    // The real relay counts the page itself: its connection, its subscription to the ops stream,
    // and the entries it delivered to it; the real auth counts the token it refused and the one it issued.
    const real = card(view, 'relay-real');
    expect(real.fields.ready).toBe('yes');
    expect(Number(real.fields.connections)).toBeGreaterThanOrEqual(1);
    expect(Number(real.fields.subscriptions)).toBeGreaterThanOrEqual(1);
    expect(Number(real.fields.streamsWatched)).toBeGreaterThanOrEqual(1);
    expect(Number(real.fields.deliveriesTotal)).toBeGreaterThan(0);
    expect(Object.keys(real.readModes)).toEqual([`127.0.0.1:${redis?.port ?? 0}/0`]);
    const realAuth = card(view, 'auth-real');
    expect(realAuth.fields.ready).toBe('yes');
    expect(Number(realAuth.fields.tokensIssuedTotal)).toBeGreaterThanOrEqual(1);
    expect(realAuth.refusals.UNAUTHORIZED).toBeGreaterThanOrEqual(1);
    expect(realAuth.fields.signingKeyIds).toBe('dashboard-test-key');

    const a = card(view, 'relay-a');
    expect(a.fields).toMatchObject({
      connections: '120',
      subscriptions: '150',
      streamsWatched: '7',
      deliveriesPerSecond: '42.5',
      ready: 'yes',
    });
    expect(a.readModes).toEqual({ '127.0.0.1:6379/0': 'notify' });
    expect(a.refusals).toEqual({ token_expired: 3, rate_limited: 1 });
    const b = card(view, 'relay-b');
    expect(b.fields).toMatchObject({
      connections: '80',
      subscriptions: '80',
      streamsWatched: '5',
      deliveriesPerSecond: '17',
      ready: 'yes',
    });
    expect(b.readModes).toEqual({ 'redis-b:6379/0': 'batch' });
    expect(b.refusals).toEqual({});
    expect(b.fields.drainConnectionsLeft).toBeUndefined();

    expect(card(view, 'auth-0').fields).toMatchObject({
      tokensIssuedTotal: '500',
      tokensPerSecond: '3',
      ready: 'yes',
      signingKeyIds: 'k1',
    });
    expect(card(view, 'auth-0').refusals).toEqual({ UNAUTHORIZED: 2 });

    const ingest = card(view, 'ingest-0');
    expect(ingest.fields).toMatchObject({ leasesHeld: '3' });
    expect(ingest.chains).toEqual([
      {
        stream: 'chain:31337:heads',
        fields: {
          chain: 'anvil-31337',
          state: 'active',
          provider: 'alpha',
          preferred: 'alpha',
          onPreferred: 'yes',
          head: '120',
          lastWritten: '120',
          failovers: '0',
          gaps: '0',
          reorgs: '1',
        },
      },
    ]);
    expect(ingest.venues).toEqual([
      {
        venue: 'sim',
        wanted: '32',
        sessions: [
          { id: 'sim-0', symbols: 20, connected: 'yes' },
          { id: 'sim-1', symbols: 12, connected: 'yes' },
        ],
        coverage: { trades: 32, book: 20 },
      },
    ]);
    // The past minutes at once (the page reads what the stream retains), then a point a tick.
    for (const chart of ['chart-deliveries', 'chart-connections']) {
      expect(view.charts[chart]?.series).toEqual(['relay-a', 'relay-b', 'relay-real']);
      expect(view.charts[chart]?.points).toBeGreaterThan(HISTORY_S);
    }
  });

  it('counts entries that are no snapshot and goes on showing the ones that are', async () => {
    const page = pageOf();
    const before = await readDashboard(page);
    expect(before.badEntries).toBe(0);
    await writer?.writeRaw('data', JSON.stringify({ kind: 'relay', pod: 'evil', connections: -1 }));
    await writer?.writeRaw('data', 'not json {');
    await writer?.writeRaw('payload', 'no data field');
    const seqBefore = Number(card(before, 'relay-a').fields.seq);
    const after = await untilPage(
      page,
      'the page never counted the three bad entries while going on',
      10_000,
      (v) => v.badEntries === 3 && Number(cardOf(v, 'relay-a')?.fields.seq) > seqBefore + 2,
    );
    expect(after.badEntryLast).toContain('no "data" field');
    expect(cardOf(after, 'evil')).toBeUndefined();
    expect(after.feedState).toBe('live');
    expect(pageErrors).toEqual([]);
  });

  it('reconnects after its connection is cut and refused for a while, and resumes from its last entry, missing no snapshot', async () => {
    const page = pageOf();
    const before = await readDashboard(page);
    const socketsBefore = pageSockets;
    // The door cuts the page's connection and refuses it while the pods write on.
    door?.setMode('down');
    await untilPage(page, 'the page never noticed its connection was cut', 10_000, (v) => v.feedState !== 'live');
    const writtenAt = (pod: string) => writer?.written(pod).length ?? 0;
    const writtenBefore = writtenAt('relay-a');
    await waitFor(() => writtenAt('relay-a') >= writtenBefore + 4, {
      timeoutMs: 10_000,
      message: 'relay-a wrote nothing while the page was cut off',
    });
    door?.setMode('pass');
    const after = await untilPage(
      page,
      'the page never went on after its connection came back',
      20_000,
      (v) =>
        pageSockets > socketsBefore &&
        v.feedState === 'live' &&
        Number(cardOf(v, 'relay-a')?.fields.seq) >= (writer?.written('relay-a').at(-1)?.seq ?? Infinity),
    );
    // Resumed, not restarted: every pod's seq runs on with no gap across the cut.
    for (const pod of ['relay-a', 'relay-b', 'relay-real', 'auth-0', 'auth-real', 'ingest-0']) {
      expect(card(after, pod).fields.missed, pod).toBe('0');
      expect(Number(card(after, pod).fields.seq), pod).toBeGreaterThan(Number(card(before, pod).fields.seq));
    }
    expect(after.badEntries).toBe(before.badEntries);
  });

  it('shows a draining relay against its schedule, the other rising, a provider failover and a venue session down', async () => {
    const page = pageOf();
    const startedAt = Date.now();
    relayB.ready = false;
    relayB.drain = { startedAt, windowMs: DRAIN_WINDOW_MS, connectionsAtStart: 80, outcome: null };
    /** The uniform schedule, connectionsAtStart × (1 − t / windowMs), as the page should round it. */
    const scheduleAt = (at: number) => Math.round(80 * (1 - Math.min(at - startedAt, DRAIN_WINDOW_MS) / DRAIN_WINDOW_MS));
    // Connections follow the schedule a little late (clients take a moment to go), and the other
    // relay takes each one over.
    const drainTick = setInterval(() => {
      const elapsed = Math.min((Date.now() - startedAt) / DRAIN_WINDOW_MS, 1);
      relayB.connections = Math.max(0, Math.round(80 * (1 - elapsed) * 1.05) - 2);
      relayA.connections = 120 + (80 - relayB.connections);
    }, 100);
    try {
      const draining = await untilPage(
        page,
        'relay-b never showed as draining with three points of its drain',
        10_000,
        (v) => cardOf(v, 'relay-b')?.state === 'draining' && (v.charts['relay-b/drain-chart']?.points ?? 0) >= 5,
      );
      // Both figures as the page shows them, against the snapshot it shows them from.
      const b = card(draining, 'relay-b');
      const shown = writer?.written('relay-b').find((s) => s.seq === Number(b.fields.seq));
      if (shown?.kind !== 'relay') throw new Error(`relay-b snapshot seq ${b.fields.seq} was never written`);
      expect(Number(b.fields.drainConnectionsLeft)).toBe(shown.connections);
      expect(Number(b.fields.drainScheduleLeft)).toBe(scheduleAt(shown.at));
      expect(Number(b.fields.drainConnectionsLeft)).toBeLessThan(80);
      expect(b.drainActive).toBe('yes');
      expect(b.fields).toMatchObject({ ready: 'no', drainOutcome: '—' });
      expect(draining.charts['relay-b/drain-chart']?.series).toEqual(['schedule', 'connections']);
      expect(Number(card(draining, 'relay-a').fields.connections)).toBeGreaterThan(120);
      expect(card(draining, 'relay-a').state).toBe('live');

      // Meanwhile the chain stream's provider is cut: switching, backfilling on the other, active again.
      Object.assign(chain, { state: 'switching', provider: null, onPreferred: false });
      await untilPage(
        page,
        'the chain stream never showed switching',
        5_000,
        (v) => cardOf(v, 'ingest-0')?.chains[0]?.fields.state === 'switching',
      );
      Object.assign(chain, { state: 'backfilling', provider: 'beta', failovers: 1, head: 126, lastWritten: 121 });
      // And one of the venue's sessions loses its link.
      Object.assign(sessions[1] ?? {}, { connected: false, symbols: 0 });
      const backfilling = await untilPage(
        page,
        'the chain stream never showed backfilling on beta, with sim-1 disconnected',
        5_000,
        (v) =>
          cardOf(v, 'ingest-0')?.chains[0]?.fields.state === 'backfilling' &&
          cardOf(v, 'ingest-0')?.venues[0]?.sessions[1]?.connected === 'no',
      );
      expect(card(backfilling, 'ingest-0').venues[0]?.sessions).toEqual([
        { id: 'sim-0', symbols: 20, connected: 'yes' },
        { id: 'sim-1', symbols: 0, connected: 'no' },
      ]);
      // As the contract's selectors read it, and as the operator reads it.
      await expect(page.locator('[data-testid="venue-session"][data-session="sim-1"][data-connected="no"]').textContent()).resolves.toBe(
        'sim-1 0 (disconnected)',
      );
      expect(backfilling.trueFalseAttributes).toEqual([]);
      // The README's picture (docs/dashboard.png) comes from the real fleet: dashboardFleet.test.ts.
      await screenshot(page, 'dashboard-draining.png');
      Object.assign(chain, { state: 'active', head: 127, lastWritten: 127 });
      Object.assign(sessions[1] ?? {}, { connected: true, symbols: 12 });
      const failedOver = await untilPage(
        page,
        'the chain stream never went active on beta',
        5_000,
        (v) => cardOf(v, 'ingest-0')?.chains[0]?.fields.state === 'active',
      );
      expect(card(failedOver, 'ingest-0').chains[0]?.fields).toMatchObject({
        provider: 'beta',
        preferred: 'alpha',
        onPreferred: 'no',
        failovers: '1',
        head: '127',
        lastWritten: '127',
      });

      // The drain ends at 0.
      await untilPage(
        page,
        'relay-b never reached 0 connections',
        DRAIN_WINDOW_MS + 5_000,
        (v) => cardOf(v, 'relay-b')?.fields.drainConnectionsLeft === '0',
      );
    } finally {
      clearInterval(drainTick);
    }
  });

  it('shows a relay that drained and exited as drained for good, and one that died mid-drain as stale', async () => {
    const page = pageOf();
    const drain = relayB.drain;
    if (drain === null) throw new Error('relay-b is not draining');
    // relay-b exits as the relay does: a last snapshot saying how its drain ended, then nothing.
    relayB.drain = { ...drain, outcome: 'drained' };
    const last = await writer?.stopWithLast('relay-b');
    if (last?.kind !== 'relay') throw new Error('relay-b wrote no last snapshot');
    const exitedAt = Date.now();
    const drained = await untilPage(page, 'relay-b never showed as drained', 5_000, (v) => cardOf(v, 'relay-b')?.state === 'drained');
    expect(card(drained, 'relay-b').drainActive).toBe('no');

    // relay-c drains too, but dies before its drain ends: no last word.
    await writer?.start('relay-c', () =>
      relaySnapshot('relay-c', {
        ready: false,
        connections: 30,
        drain: { startedAt: Date.now() - 1_000, windowMs: 60_000, connectionsAtStart: 31, outcome: null },
      }),
    );
    await untilPage(page, 'relay-c never showed as draining', 5_000, (v) => cardOf(v, 'relay-c')?.state === 'draining');
    await writer?.stop('relay-c');
    const diedAt = Date.now();

    // Until relay-c turns stale, and relay-b's card shows it silent for longer than that, relay-b is
    // never anything but drained.
    const relayBStates = new Set<string>();
    const view = await untilPage(page, 'relay-c never turned stale', OPS_STALE_AFTER_MS + 5_000, (v) => {
      relayBStates.add(cardOf(v, 'relay-b')?.state ?? '(no card)');
      return cardOf(v, 'relay-c')?.state === 'stale' && Number(cardOf(v, 'relay-b')?.fields.age) > OPS_STALE_AFTER_MS / 1_000;
    });
    expect(Date.now() - diedAt).toBeGreaterThanOrEqual(OPS_STALE_AFTER_MS - 1_000);
    expect(Date.now() - exitedAt).toBeGreaterThan(OPS_STALE_AFTER_MS);
    expect([...relayBStates]).toEqual(['drained']);
    const b = card(view, 'relay-b');
    expect(b.state).toBe('drained');
    expect(Number(b.fields.age)).toBeGreaterThan(OPS_STALE_AFTER_MS / 1_000);
    // Its last snapshot stays on the card: the drain at 0, against what the schedule said then, and how it ended.
    expect(b.drainActive).toBe('no');
    expect(b.fields).toMatchObject({
      state: 'drained',
      seq: String(last.seq),
      drainOutcome: 'drained',
      drainConnectionsLeft: '0',
      drainScheduleLeft: String(Math.round(80 * (1 - Math.min(last.at - drain.startedAt, DRAIN_WINDOW_MS) / DRAIN_WINDOW_MS))),
      connections: '0',
      ready: 'no',
    });
    const c = card(view, 'relay-c');
    expect(c.drainActive).toBe('no');
    expect(c.fields).toMatchObject({ state: 'stale', drainOutcome: '—', connections: '30' });
    for (const pod of ['relay-a', 'relay-real', 'auth-0', 'auth-real', 'ingest-0']) expect(card(view, pod).state).toBe('live');
    expect(card(view, 'relay-a').fields.connections).toBe('200');
    expect(view.trueFalseAttributes).toEqual([]);
    await screenshot(page, 'dashboard-drained.png');
    expect(view.badEntries).toBe(3);
    expect(writer?.failures).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
