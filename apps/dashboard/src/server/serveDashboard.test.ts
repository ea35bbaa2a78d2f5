import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_PAGE_DIR, DashboardConfigError, DashboardPageMissingError, serveDashboard } from './serveDashboard.js';
import type { DashboardServer } from './serveDashboard.js';

const config = { authUrl: 'http://127.0.0.1:8080', relayUrl: 'ws://127.0.0.1:8081/v1/ws' };
let server: DashboardServer | undefined;

beforeAll(async () => {
  server = await serveDashboard({ port: 0, config });
}, 60_000);

const scratch = mkdtempSync(join(tmpdir(), 'serve-dashboard-'));
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** One sample of the exposition text: `name{labels} value`, or NaN when absent. */
function sample(exposition: string, series: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

function url(path: string): string {
  if (server === undefined) throw new Error('beforeAll did not finish');
  return new URL(path, server.url).href;
}

describe('serveDashboard', () => {
  it('serves the built page, its assets and /config.json on the port the kernel picked', async () => {
    expect(server?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(url('/'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(url(`/${script}`));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const served = await fetch(url('/config.json'));
    expect(served.headers.get('cache-control')).toBe('no-store');
    expect(await served.json()).toEqual(config);
  });

  it('lets the page connect to auth and the relay only', async () => {
    const csp = (await fetch(url('/'))).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("connect-src 'self' http://127.0.0.1:8080 ws://127.0.0.1:8081");
    expect(csp).toContain("script-src 'self'");
  });

  it('serves nothing outside dist/, no dotfile, and answers a bad path with 400', async () => {
    for (const path of ['/..%2f..%2fpackage.json', '/%2e%2e/package.json', '/.build-input.json', '/missing.js', '/assets'])
      expect((await fetch(url(path))).status, path).toBe(404);
    expect((await fetch(url('/%E0%A4%A'))).status).toBe(400);
    expect((await fetch(url('/'), { method: 'POST' })).status).toBe(405);
  });

  it('builds into dist/page, and answers its probes', async () => {
    expect(server?.pageDir).toBe(DASHBOARD_PAGE_DIR);
    expect(server?.port).toBe(Number(new URL(server?.url ?? '').port));
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(url(path));
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
  });

  it('counts what it answered on /metrics, by route and status, with the process metrics', async () => {
    const requests = (route: string, status: number) => `streamgate_dashboard_http_requests_total{route="${route}",status="${status}"}`;
    const before = await (await fetch(url('/metrics'))).text();
    for (const path of ['/config.json', '/config.json', '/', '/nowhere.js', '/%E0%A4%A']) await fetch(url(path));
    const res = await fetch(url('/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const after = await res.text();
    const grew = (series: string) => (sample(after, series) || 0) - (sample(before, series) || 0);
    expect(grew(requests('config', 200))).toBe(2);
    expect(grew(requests('page', 200))).toBe(1);
    // A scanner's paths are one label value, never one series each.
    expect(grew(requests('other', 404))).toBe(1);
    expect(grew(requests('other', 400))).toBe(1);
    expect(after).not.toContain('nowhere');
    // The scrape before this one is counted once it was answered.
    expect(sample(after, requests('metrics', 200))).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'streamgate_dashboard_page_ready')).toBe(1);
    expect(sample(after, 'streamgate_dashboard_failures_total{kind="request"}')).toBe(0);
    expect(sample(after, 'streamgate_dashboard_failures_total{kind="file_read"}')).toBe(0);
    expect(sample(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('serves a prebuilt page as it is, and is not ready once it is gone', async () => {
    const pageDir = join(scratch, 'prebuilt');
    mkdirSync(pageDir);
    // No stamp and no sources: a build would replace it, so serving it shows none ran.
    writeFileSync(join(pageDir, 'index.html'), '<p>prebuilt</p>');
    const prebuilt = await serveDashboard({ port: 0, config, prebuiltPage: pageDir });
    try {
      expect(prebuilt.pageDir).toBe(pageDir);
      expect(await (await fetch(new URL('/', prebuilt.url))).text()).toBe('<p>prebuilt</p>');
      expect(readdirSync(pageDir)).toEqual(['index.html']);
      rmSync(join(pageDir, 'index.html'));
      const ready = await fetch(new URL('/readyz', prebuilt.url));
      expect(ready.status).toBe(503);
      expect(await ready.text()).toBe('page missing\n');
      expect(sample(await (await fetch(new URL('/metrics', prebuilt.url))).text(), 'streamgate_dashboard_page_ready')).toBe(0);
      expect((await fetch(new URL('/healthz', prebuilt.url))).status).toBe(200);
    } finally {
      await prebuilt.close();
    }
  });

  it('refuses a prebuilt page directory without index.html, and builds nothing there', async () => {
    const pageDir = join(scratch, 'empty');
    mkdirSync(pageDir);
    const refused = serveDashboard({ port: 0, config, prebuiltPage: pageDir });
    await expect(refused).rejects.toBeInstanceOf(DashboardPageMissingError);
    await expect(refused).rejects.toMatchObject({ code: 'page_missing', retryable: false, pageDir });
    expect(readdirSync(pageDir)).toEqual([]);
    await expect(serveDashboard({ port: 0, config, prebuiltPage: join(scratch, 'nowhere') })).rejects.toBeInstanceOf(
      DashboardPageMissingError,
    );
  });

  it('refuses a config the page could not use', async () => {
    await expect(serveDashboard({ port: 0, config: { authUrl: 'ftp://x', relayUrl: 'http://y' } })).rejects.toBeInstanceOf(
      DashboardConfigError,
    );
  });
});
