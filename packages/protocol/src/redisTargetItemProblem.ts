import { normalizeRedisTarget } from './redisTarget.js';

/**
 * An item as a message may show it: anything between `//` and the last `@` (or from the start
 * when there is no `//`) replaced by `<credentials>`, so a password holding `/` or `@` is masked
 * too. Over-masking is harmless; config messages go to logs.
 */
export function maskRedisCredentials(item: string): string {
  const at = item.lastIndexOf('@');
  if (at === -1) return item;
  const slashes = item.indexOf('//');
  const from = slashes !== -1 && slashes < at ? slashes + 2 : 0;
  return `${item.slice(0, from)}<credentials>${item.slice(at)}`;
}

/**
 * The check of one item of a target list (RELAY_REDIS_ALLOWLIST, AUTH_REDIS_TARGETS,
 * INGEST_REDIS_TARGETS): null for a target without credentials, otherwise a message showing the
 * item with its credentials masked, ending with `fix`.
 */
export function redisTargetItemProblem(item: string, fix: string): string | null {
  return normalizeRedisTarget(item) === null
    ? `"${maskRedisCredentials(item)}" is not a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL without credentials; ${fix}`
    : null;
}
