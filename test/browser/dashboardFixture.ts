import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { sha256Hex } from '@streamgate/auth';
import { serveDashboard } from '@streamgate/dashboard/server';
import type { DashboardServer } from '@streamgate/dashboard/server';
import { generateSigningKey } from '@streamgate/server';
import { freePort, repoRoot, spawnAuth, spawnRelay, startChromium, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, ChromiumBrowser, FaultProxy, RedisServer, RelayProcess } from '@streamgate/testkit';
import { OpsSnapshotWriter } from '../support/opsSnapshots.js';
import { saveDashboardScreenshot, untilDashboard } from '../support/readDashboard.js';
import type { DashboardView } from '../support/readDashboard.js';

// The processes and the page of dashboard.test.ts: a real Redis, auth service and relay (the
// page's connection through a fault proxy), the dashboard served by serveDashboard, headless
// Chromium, and the writer of the pretend pods' snapshots. Bindings are read live by the test.

const ISSUER = 'streamgate-dashboard-test';
const AUDIENCE = 'streamgate-relay';
export const CREDENTIAL = `operator-${Math.random().toString(36).slice(2)}`;
/** Faster than the apps' once a second: the page does not care, the test's wall time does. */
export const PUBLISH_EVERY_MS = 400;
export const DRAIN_WINDOW_MS = 6_000;
const artifactsDir = join(repoRoot(), 'test', 'browser', 'artifacts');

export let redis: RedisServer | undefined;
export let auth: AppProcess | undefined;
export let relay: RelayProcess | undefined;
/** Between the page and the relay, as a load balancer would be: the test cuts connections there. */
export let door: FaultProxy | undefined;
/** WebSockets the page opened (to the relay, through the door). */
export let pageSockets = 0;
export let dashboard: DashboardServer | undefined;
export let browser: ChromiumBrowser | undefined;
export let writer: OpsSnapshotWriter | undefined;
export const pageErrors: string[] = [];
export const consoleErrors: string[] = [];

/** Waits until the page shows what `check` wants; at the deadline fails with what it showed. */
export function untilPage(page: Page, what: string, timeoutMs: number, check: (view: DashboardView) => boolean): Promise<DashboardView> {
  return untilDashboard(
    page,
    {
      what,
      timeoutMs,
      intervalMs: 50,
      context: () =>
        `page errors: ${JSON.stringify(pageErrors)}\nconsole errors: ${JSON.stringify(consoleErrors)}\n` +
        `writer failures: ${JSON.stringify(writer?.failures)}\n${relay?.service.output() ?? ''}\n${auth?.service.output() ?? ''}`,
    },
    check,
  );
}

export const screenshot = (page: Page, name: string): Promise<string> => saveDashboardScreenshot(page, artifactsDir, name);

export function pageOf(): Page {
  if (browser === undefined || dashboard === undefined || writer === undefined) throw new Error('beforeAll did not finish');
  return browser.page;
}

/** Starts everything before the file's tests and stops it after; a failed step leaves a screenshot. */
export function useDashboardFixture(): void {
  beforeAll(async () => {
    redis = await startRedis();
    const key = await generateSigningKey('ES256', 'dashboard-test-key');
    // The page's origin must be known to auth's CORS before the page is served.
    const dashboardPort = await freePort();
    auth = await spawnAuth({
      issuer: ISSUER,
      audience: AUDIENCE,
      redisUrl: redis.url,
      signingKeys: JSON.stringify([key]),
      env: {
        NODE_ENV: 'test',
        AUTH_OPS_REDIS_URL: redis.url,
        AUTH_OPERATOR_CREDENTIAL_SHA256: sha256Hex(CREDENTIAL),
        AUTH_CORS_ORIGINS: `http://127.0.0.1:${dashboardPort}`,
        AUTH_POD_NAME: 'auth-real',
      },
    });
    // The real relay and auth publish their own snapshots beside the pretend pods'.
    relay = await spawnRelay({
      name: 'relay-real',
      authUrl: auth.httpUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      redisAllowlist: redis.url,
      env: { RELAY_OPS_REDIS_URL: redis.url },
    });
    const relayHttp = relay.httpUrl;
    await waitFor(async () => (await fetch(`${relayHttp}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: 'the relay never became ready',
    });
    door = await startFaultProxy({ httpUrl: relay.httpUrl, wsUrl: relay.url });
    dashboard = await serveDashboard({ port: dashboardPort, config: { authUrl: auth.httpUrl, relayUrl: door.wsUrl } });
    browser = await startChromium({ viewport: { width: 1400, height: 900 } });
    browser.page.on('pageerror', (error) => pageErrors.push(error.message));
    browser.page.on('websocket', () => pageSockets++);
    browser.page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    writer = new OpsSnapshotWriter(redis.client(), { intervalMs: PUBLISH_EVERY_MS });
  }, 60_000);

  afterEach(async ({ task }) => {
    if (task.result?.state === 'fail' && browser !== undefined) await screenshot(browser.page, 'dashboard-failed.png');
  });

  afterAll(async () => {
    await writer?.stopAll();
    await browser?.close();
    await dashboard?.close();
    await door?.close();
    await relay?.service.stop();
    await auth?.service.stop();
    await redis?.stop();
  });
}
