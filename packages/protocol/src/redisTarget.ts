import { z } from 'zod';

/**
 * The Redis holding a stream, as a token names it: one instance (`redis://host:port/db`,
 * `rediss://…`) or a Redis Cluster by one seed address (`redis-cluster://host:port`,
 * `rediss-cluster://…`). Credentials never travel in a token; a URL carrying them is refused, and
 * the relay adds its own from configuration.
 */
export const redisTargetSchema = z
  .string()
  .max(300)
  .refine((raw) => normalizeRedisTarget(raw) !== null, {
    message:
      'must be a redis:// or rediss:// URL with host, optional port and db, or a redis-cluster:// or rediss-cluster:// URL with host and optional port, and no credentials',
  })
  .transform((raw) => normalizeRedisTarget(raw) ?? raw);

export type RedisTarget = z.infer<typeof redisTargetSchema>;

/** What a normalized target names: how to connect to it. */
export type RedisTargetAddress =
  | { readonly kind: 'standalone'; readonly tls: boolean; readonly host: string; readonly port: number; readonly db: number }
  | { readonly kind: 'cluster'; readonly tls: boolean; readonly host: string; readonly port: number };

const SCHEMES: Readonly<Record<string, { kind: 'standalone' | 'cluster'; tls: boolean }>> = {
  'redis:': { kind: 'standalone', tls: false },
  'rediss:': { kind: 'standalone', tls: true },
  'redis-cluster:': { kind: 'cluster', tls: false },
  'rediss-cluster:': { kind: 'cluster', tls: true },
};

/**
 * Canonical form, so that allowlist checks compare like with like: `scheme://host:port/db` for an
 * instance (`redis://r:6379` and `redis://R:6379/0` are the same target), `scheme://host:port` for
 * a cluster (which has only db 0: a path of `/0` is dropped, any other refused). Returns null when
 * the URL is not an acceptable target.
 */
export function normalizeRedisTarget(raw: string): string | null {
  const address = parseRedisTarget(raw);
  if (address === null) return null;
  const scheme = `redis${address.tls ? 's' : ''}${address.kind === 'cluster' ? '-cluster' : ''}:`;
  const base = `${scheme}//${address.host}:${address.port}`;
  return address.kind === 'cluster' ? base : `${base}/${address.db}`;
}

/** The address a target URL names, or null when it is not an acceptable target. */
export function parseRedisTarget(raw: string): RedisTargetAddress | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const scheme = SCHEMES[url.protocol];
  if (scheme === undefined) return null;
  if (url.username !== '' || url.password !== '') return null;
  if (url.hostname === '' || url.search !== '' || url.hash !== '') return null;
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^(0|[1-9][0-9]?)$/.test(path)) return null;
  const db = path === '' ? 0 : Number(path);
  if (scheme.kind === 'cluster' && db !== 0) return null;
  const port = url.port === '' ? 6379 : Number(url.port);
  // Port 0 means "any free port" to a listener; no Redis can be reached on it.
  if (port === 0) return null;
  // An IPv6 host keeps its brackets (`[::1]`) here, so the normalized URL stays a URL; openRedis strips them.
  const host = url.hostname.toLowerCase();
  return scheme.kind === 'cluster'
    ? { kind: 'cluster', tls: scheme.tls, host, port }
    : { kind: 'standalone', tls: scheme.tls, host, port, db };
}
