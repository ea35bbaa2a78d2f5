import type { IncomingMessage, ServerResponse } from 'node:http';

export type CorsOptions = {
  /** Exact origins (`https://app.example.com`), or the one item `*` for any origin. */
  origins: readonly string[];
  /** Sends Access-Control-Allow-Credentials: true; never with `*` (browsers refuse that pair). */
  credentials: boolean;
  maxAgeSeconds: number;
};

/** What tRPC's links send: httpLink / httpBatchLink set content-type on POST, the stream links trpc-accept. */
export const CORS_ALLOWED_HEADERS = ['content-type', 'authorization', 'trpc-accept', 'x-trpc-source'] as const;
/** Queries are GET, mutations and long batches POST. */
export const CORS_ALLOWED_METHODS = ['GET', 'POST'] as const;

/**
 * Cross-origin access to the token procedures. CORS only decides which pages may read a
 * response; who gets a token is decided by each procedure's `authorize`. Actual requests from an
 * origin not listed are therefore still served (a same-origin page behind a path-routing ingress
 * sends its own Origin), only without the headers that would let another page read them.
 */
export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #anyOrigin: boolean;
  readonly #credentials: boolean;
  readonly #maxAge: string;

  constructor(options: CorsOptions | null) {
    this.#origins = new Set(options?.origins ?? []);
    this.#anyOrigin = this.#origins.has('*');
    this.#credentials = options?.credentials === true && !this.#anyOrigin;
    this.#maxAge = String(options?.maxAgeSeconds ?? 0);
  }

  get enabled(): boolean {
    return this.#origins.size > 0;
  }

  /**
   * Answers a preflight (and returns true), or adds the allow headers an actual request from an
   * allowed origin needs and returns false so the request is served.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      const allowed = this.#allowOrigin(origin);
      if (allowed === null) {
        const reason = this.enabled ? `origin ${origin ?? '(none)'} is not allowed` : 'cross-origin requests are not enabled';
        res.writeHead(403, { 'content-type': 'text/plain', vary: 'Origin' }).end(`${reason} (AUTH_CORS_ORIGINS)\n`);
        return true;
      }
      res
        .writeHead(204, {
          ...this.#allowHeaders(allowed),
          'access-control-allow-methods': CORS_ALLOWED_METHODS.join(', '),
          'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
          'access-control-max-age': this.#maxAge,
          'content-length': '0',
        })
        .end();
      return true;
    }
    if (!this.enabled) return false;
    // Caches must key on Origin whenever the answer depends on it, including when it is absent.
    res.setHeader('vary', 'Origin');
    const allowed = this.#allowOrigin(origin);
    if (allowed !== null) for (const [name, value] of Object.entries(this.#allowHeaders(allowed))) res.setHeader(name, value);
    return false;
  }

  #allowOrigin(origin: string | undefined): string | null {
    if (origin === undefined || !this.enabled) return null;
    if (this.#anyOrigin) return '*';
    return this.#origins.has(origin) ? origin : null;
  }

  #allowHeaders(allowed: string): Record<string, string> {
    return {
      'access-control-allow-origin': allowed,
      vary: 'Origin',
      ...(this.#credentials ? { 'access-control-allow-credentials': 'true' } : {}),
    };
  }
}
