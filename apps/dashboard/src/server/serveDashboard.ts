import { createReadStream } from 'node:fs';
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { parseDashboardConfig } from '../config/dashboardConfig.js';
import { DashboardMetrics } from './DashboardMetrics.js';
import type { DashboardRoute } from './DashboardMetrics.js';
import { ensureDashboardBuilt } from './ensureDashboardBuilt.js';
import { DashboardPageMissingError, hasBuiltPage } from './prebuiltPage.js';

export { DASHBOARD_PAGE_DIR } from './ensureDashboardBuilt.js';
export { DashboardPageMissingError } from './prebuiltPage.js';

export interface ServeDashboardOptions {
  /** 0 picks a free port; the actual one is in the returned url. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Served as /config.json. */
  config: { authUrl: string; relayUrl: string };
  /**
   * A directory holding the built page (`pnpm build` writes it to dist/page, DASHBOARD_PAGE_DIR),
   * served as it is: Vite never runs, and a directory without index.html is refused with
   * DashboardPageMissingError. Production passes it (src/main.ts). Unset: the page is built into
   * dist/page first when it is missing or stale (ensureDashboardBuilt), for the repository's
   * tests and fleet.
   */
  prebuiltPage?: string;
  /** Where a failed request or file read is reported; default console.error. */
  onError?: (message: string, error: unknown) => void;
}

export interface DashboardServer {
  /** `http://host:port/`; append `#credential=<value>` to open it signed in. */
  url: string;
  /** The port listened on (the kernel's pick for port 0). */
  port: number;
  /** The directory the page is served from. */
  pageDir: string;
  close(): Promise<void>;
}

export class DashboardConfigError extends Error {
  readonly code = 'config_invalid';
  readonly retryable = false;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The page may talk to its own origin, the auth service and the relay, nothing else: it holds
 * the operator credential. Inline styles are index.html's own <style>.
 */
function contentSecurityPolicy(config: ServeDashboardOptions['config']): string {
  const connect = ["'self'", new URL(config.authUrl).origin, new URL(config.relayUrl).origin.replace(/^http/, 'ws')];
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src ${[...new Set(connect)].join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The built page to serve: the one given, checked; else dist/page, built first if need be. */
async function pageDirOf(prebuilt: string | undefined): Promise<string> {
  if (prebuilt === undefined) return (await ensureDashboardBuilt()).pageDir;
  const pageDir = resolve(prebuilt);
  if (!(await hasBuiltPage(pageDir))) throw new DashboardPageMissingError(pageDir);
  return pageDir;
}

/** The route label of a request path (the page's own files by what they are, anything else `other`). */
function routeOf(path: string): DashboardRoute {
  switch (path) {
    case '/':
    case '/index.html':
      return 'page';
    case '/config.json':
      return 'config';
    case '/healthz':
      return 'healthz';
    case '/readyz':
      return 'readyz';
    case '/metrics':
      return 'metrics';
    default:
      return path.startsWith('/assets/') ? 'asset' : 'other';
  }
}

/**
 * Serves the dashboard: its built files, /config.json, /healthz, /readyz and /metrics. Builds it with Vite
 * first when dist/page is missing or was built from other sources (see ensureDashboardBuilt),
 * unless given a prebuilt page.
 */
export async function serveDashboard(options: ServeDashboardOptions): Promise<DashboardServer> {
  const parsed = parseDashboardConfig(options.config);
  if (!parsed.ok) throw new DashboardConfigError(`serveDashboard: ${parsed.problem}`);
  const configBody = JSON.stringify(parsed.config);
  const onError = options.onError ?? ((message: string, error: unknown) => console.error(message, error));
  const metrics = new DashboardMetrics();
  const pageDir = await pageDirOf(options.prebuiltPage);
  const securityHeaders = {
    'content-security-policy': contentSecurityPolicy(parsed.config),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = urlPath(req.url);
    // Counted once the response is over, with the status it went out with (a 500 included).
    res.once('close', () => metrics.answered(path === undefined ? 'other' : routeOf(path), res.statusCode));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request path\n');
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      // Ready while the page is there to serve (a prebuilt one may sit on a volume that went away).
      const ready = await hasBuiltPage(pageDir);
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain', 'cache-control': 'no-store' })
        .end(ready ? 'ready\n' : 'page missing\n');
      return;
    }
    if (path === '/metrics') {
      const body = await metrics.render(await hasBuiltPage(pageDir));
      res
        .writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' })
        .end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === '/config.json') {
      res
        .writeHead(200, { ...securityHeaders, 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(req.method === 'HEAD' ? undefined : configBody);
      return;
    }
    const file = staticPath(pageDir, path);
    const info = file === undefined ? undefined : await fileInfo(file);
    if (file === undefined || info === undefined || !info.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, {
      ...securityHeaders,
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      // Vite names assets by content hash; index.html names the current ones and must be re-read.
      'cache-control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file)
      .on('error', (error) => {
        metrics.failed('file_read');
        onError(`dashboard: reading ${file} failed`, error);
        res.destroy();
      })
      .pipe(res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      metrics.failed('request');
      onError('dashboard: request failed', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return { url: `http://${shownHost}:${port}/`, port, pageDir, close };
}

function urlPath(url: string | undefined): string | undefined {
  try {
    return decodeURIComponent(new URL(url ?? '/', 'http://dashboard').pathname);
  } catch (error) {
    if (error instanceof URIError || error instanceof TypeError) return undefined;
    throw error;
  }
}

/** undefined when nothing is there; any other failure is the server's and becomes a 500. */
async function fileInfo(file: string): Promise<Stats | undefined> {
  try {
    return await stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The file under the page directory a URL path names, or undefined for one that leaves it or names a dotfile. */
function staticPath(pageDir: string, path: string): string | undefined {
  const relativePath = normalize(path === '/' ? '/index.html' : path).replace(/^[/\\]+/, '');
  if (relativePath.split(sep).some((part) => part.startsWith('.') || part === '')) return undefined;
  const file = join(pageDir, relativePath);
  return file.startsWith(pageDir + sep) ? file : undefined;
}
