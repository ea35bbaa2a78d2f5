/**
 * A cluster node name as ioredis keys it (`host:port`; an IPv6 host as `::1:7000` or
 * `[::1]:7000`) split at its last colon: it is no URL, and an IPv6 host is not one either.
 */
export function nodeAddress(node: string): { readonly host: string; readonly port: number } | null {
  const colon = node.lastIndexOf(':');
  if (colon <= 0) return null;
  const port = Number(node.slice(colon + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return null;
  const host = node.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return host === '' ? null : { host, port };
}
