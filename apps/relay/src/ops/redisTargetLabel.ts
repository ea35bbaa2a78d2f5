import { parseRedisTarget } from '@streamgate/protocol';

/**
 * How a Redis target appears in an operations snapshot: `host:port/db` for an instance,
 * `cluster host:port` for a Redis Cluster (by its seed). Built from the parts of the URL, so a
 * password can never be carried along, whatever the input held.
 */
export function redisTargetLabel(target: string): string {
  if (!URL.canParse(target)) return 'unparsable-target';
  const url = new URL(target);
  url.username = '';
  url.password = '';
  const address = parseRedisTarget(url.href);
  if (address?.kind === 'cluster') return `cluster ${address.host}:${address.port}`.slice(0, 120);
  const db = url.pathname.replace(/^\//, '') || '0';
  return `${url.hostname}:${url.port === '' ? '6379' : url.port}/${db}`.slice(0, 120);
}
