import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDashboard, spawnTsEntry, withDeadline } from '@streamgate/testkit';
import { ensureDashboardBuilt } from './server/ensureDashboardBuilt.js';

const ENTRY = 'apps/dashboard/src/main.ts';
const page = { authUrl: 'http://auth.test:8080', relayUrl: 'wss://relay.test/v1/ws' };
const empty = mkdtempSync(join(tmpdir(), 'dashboard-main-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

// main never builds: the page it serves is built here, as the image's build stage does.
beforeAll(async () => {
  await ensureDashboardBuilt();
}, 60_000);

describe('dashboard main', () => {
  it('logs "listening" with its port, serves the page, /config.json, its probes and /metrics, and exits 0 on SIGTERM', async () => {
    const dashboard = await spawnDashboard(page);
    await using service = dashboard.service;
    expect(dashboard.port).toBeGreaterThan(0);
    const get = (path: string): Promise<Response> => fetch(`${dashboard.httpUrl}${path}`, { signal: AbortSignal.timeout(5_000) });
    const html = await get('/');
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<div id="root">');
    expect(await (await get('/config.json')).json()).toEqual(page);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toContain('streamgate_dashboard_http_requests_total{route="config",status="200"} 1');
    expect(metrics).toContain('streamgate_dashboard_page_ready 1');
    service.signal('SIGTERM');
    expect((await withDeadline(service.exited, 10_000, 'dashboard exit after SIGTERM')).code).toBe(0);
  });

  it('exits 78 naming every bad variable at once, a blank required one included', async () => {
    await using service = await spawnTsEntry(ENTRY, {
      name: 'dashboard-bad-config',
      env: { DASHBOARD_PORT: 'abc', DASHBOARD_AUTH_URL: ' ', DASHBOARD_RELAY_URL: 'http://relay.test/v1/ws', DASHBOARD_PAGE_DIR: empty },
    });
    expect((await withDeadline(service.exited, 20_000, 'dashboard exit on a bad configuration')).code).toBe(78);
    const output = service.output();
    expect(output).toContain('invalid dashboard configuration (3 problems)');
    expect(output).toMatch(/"variables":\["DASHBOARD_PORT","DASHBOARD_AUTH_URL","DASHBOARD_RELAY_URL"\]/);
    expect(output).toContain(
      'DASHBOARD_PORT=\\"abc\\": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8084',
    );
    expect(output).toContain('DASHBOARD_AUTH_URL=\\" \\": is required');
    expect(output).toContain('DASHBOARD_RELAY_URL=\\"http://relay.test/v1/ws\\": must be a ws:// or wss:// URL');
    expect(output).not.toMatch(/"msg":"listening"/);
  });

  it('refuses to start (exit 78) on a directory without a built page, and never builds one there', async () => {
    await using service = await spawnTsEntry(ENTRY, {
      name: 'dashboard-no-page',
      env: {
        DASHBOARD_HOST: '127.0.0.1',
        DASHBOARD_PORT: '0',
        DASHBOARD_AUTH_URL: page.authUrl,
        DASHBOARD_RELAY_URL: page.relayUrl,
        DASHBOARD_PAGE_DIR: empty,
      },
    });
    expect((await withDeadline(service.exited, 20_000, 'dashboard exit without a page')).code).toBe(78);
    expect(service.output()).toMatch(/"variables":\["DASHBOARD_PAGE_DIR"\]/);
    expect(service.output()).toContain(`no built dashboard page in ${empty} (its index.html is missing)`);
    expect(service.output()).not.toMatch(/"msg":"listening"/);
    expect(readdirSync(empty)).toEqual([]);
  });
});
