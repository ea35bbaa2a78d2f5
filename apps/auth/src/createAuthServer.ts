import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnyTRPCRouter } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { CreateHTTPHandlerOptions } from '@trpc/server/adapters/standalone';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { createJwksHandler } from '@streamgate/server';
import type { SigningKeySet } from '@streamgate/server';
import { createAuthMetrics } from './createAuthMetrics.js';
import type { AuthMetrics } from './createAuthMetrics.js';
import { CorsPolicy } from './CorsPolicy.js';
import type { CorsOptions } from './CorsPolicy.js';

export const JWKS_PATH = '/.well-known/jwks.json';

export type AuthServerOptions<TRouter extends AnyTRPCRouter> = {
  /**
   * The product's router and, when its context needs one, `createContext`; any other option of
   * tRPC's standalone handler goes here too. `basePath` is fixed to /trpc/.
   */
  trpc: CreateHTTPHandlerOptions<TRouter>;
  keys: SigningKeySet;
  /** Default: a fresh registry. Pass the one whose observer the router's token procedures use. */
  metrics?: AuthMetrics;
  host?: string;
  /** 0 picks a free port; the actual one is on the returned server. */
  port?: number;
  logger?: Logger;
  /** How long close() lets in-flight requests finish before cutting connections. */
  closeGraceMs?: number;
  /** Which browser origins may call /trpc; default none (no CORS headers, preflights refused). */
  cors?: CorsOptions | null;
};

export type AuthServer = AsyncDisposable & {
  readonly port: number;
  readonly host: string;
  readonly metrics: AuthMetrics;
  close(): Promise<void>;
};

type Route = 'trpc' | 'jwks' | 'healthz' | 'metrics' | 'not_found';

function routeOf(url: string): Route {
  const path = url.split('?', 1)[0] ?? '';
  if (path === '/trpc' || path.startsWith('/trpc/')) return 'trpc';
  if (path === JWKS_PATH) return 'jwks';
  if (path === '/healthz') return 'healthz';
  if (path === '/metrics') return 'metrics';
  return 'not_found';
}

/**
 * The token service: the product's tRPC router at /trpc, the JWKS relays verify against, health
 * and metrics. The router is an argument so that each product serves its own procedures.
 */
export async function createAuthServer<TRouter extends AnyTRPCRouter>(options: AuthServerOptions<TRouter>): Promise<AuthServer> {
  const { trpc, keys, metrics = createAuthMetrics(), host = '0.0.0.0', port = 8080, closeGraceMs = 5_000 } = options;
  const logger = options.logger ?? pino({ level: 'silent' });
  const userOnError = trpc.onError;
  const handlerOptions: CreateHTTPHandlerOptions<TRouter> = { ...trpc };
  handlerOptions.basePath = '/trpc/';
  handlerOptions.onError = (opts) => {
    metrics.refused(opts.error.code);
    // Expected outcomes (FORBIDDEN, BAD_REQUEST…) are the client's business; faults are ours.
    if (opts.error.code === 'INTERNAL_SERVER_ERROR') {
      logger.error({ err: opts.error.cause ?? opts.error, path: opts.path }, 'trpc procedure failed');
    }
    userOnError?.(opts);
  };
  const cors = new CorsPolicy(options.cors ?? null);
  const userResponseMeta = trpc.responseMeta;
  if (cors.enabled) {
    // tRPC writes its own Vary (trpc-accept, accept) over any set before it; Origin is added to it here.
    handlerOptions.responseMeta = (opts) => {
      const meta = userResponseMeta?.(opts) ?? {};
      const headers = new Headers();
      if (meta.headers instanceof Headers) meta.headers.forEach((value, name) => headers.append(name, value));
      else
        for (const [name, value] of Object.entries(meta.headers ?? {}))
          for (const one of [value].flat()) if (one !== undefined) headers.append(name, one);
      headers.append('vary', 'Origin');
      return { ...meta, headers };
    };
  }
  const trpcHandler = createHTTPHandler(handlerOptions);
  const jwksHandler = createJwksHandler(keys, { maxAgeSeconds: 60 });

  const handle = async (req: IncomingMessage, res: ServerResponse, route: Route): Promise<void> => {
    switch (route) {
      case 'trpc':
        if (cors.handle(req, res)) return;
        trpcHandler(req, res);
        return;
      case 'jwks':
        jwksHandler(req, res);
        return;
      case 'healthz':
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"status":"ok"}');
        return;
      case 'metrics': {
        const body = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
        return;
      }
      case 'not_found':
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
    }
  };

  const server = createServer((req, res) => {
    const route = routeOf(req.url ?? '/');
    const stopTimer = metrics.httpDuration.startTimer({ route, method: req.method ?? 'UNKNOWN' });
    res.once('finish', () => stopTimer({ status: String(res.statusCode) }));
    handle(req, res, route).catch((error: unknown) => {
      logger.error({ err: error, route }, 'request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), closeGraceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      // Keep-alive sockets with no request in flight would otherwise hold close() open.
      server.closeIdleConnections();
    });
    return closing;
  };

  return { port: address.port, host, metrics, close, [Symbol.asyncDispose]: close };
}
