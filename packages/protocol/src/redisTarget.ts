import { z } from 'zod';

/**
 * The Redis instance holding a stream, as a token names it: `redis://host:port/db` or
 * `rediss://…`. Credentials never travel in a token; a URL carrying them is refused, and the
 * relay adds its own from configuration.
 */
export const redisTargetSchema = z
  .string()
  .max(300)
  .refine((raw) => normalizeRedisTarget(raw) !== null, {
    message: 'must be a redis:// or rediss:// URL with host, optional port and db, and no credentials',
  })
  .transform((raw) => normalizeRedisTarget(raw) ?? raw);

export type RedisTarget = z.infer<typeof redisTargetSchema>;

/**
 * Canonical form `scheme://host:port/db` so that allowlist checks compare like with like
 * (`redis://r:6379` and `redis://R:6379/0` are the same target). Returns null when the URL is
 * not an acceptable target.
 */
export function normalizeRedisTarget(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return null;
  if (url.username !== '' || url.password !== '') return null;
  if (url.hostname === '' || url.search !== '' || url.hash !== '') return null;
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^(0|[1-9][0-9]?)$/.test(path)) return null;
  const port = url.port === '' ? '6379' : url.port;
  return `${url.protocol}//${url.hostname.toLowerCase()}:${port}/${path === '' ? '0' : path}`;
}
