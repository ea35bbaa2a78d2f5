/**
 * A NATS JetStream target as a token names it: the cluster by one or more seed addresses and the
 * JetStream stream holding the per-task subjects, `nats://host[:port][,host[:port]…][/STREAM]`
 * (`tls://` for TLS). The stream defaults to `STREAMGATE`. Credentials never travel in a token: a
 * URL carrying them is refused, and the relay adds its own from configuration.
 */
export interface JetStreamTargetAddress {
  readonly kind: 'jetstream';
  readonly tls: boolean;
  /** `host:port`, lower-case, in the order given, without duplicates. */
  readonly servers: readonly string[];
  /** The JetStream stream whose subjects `<stream>.<token>` hold the per-task streams. */
  readonly stream: string;
}

export const DEFAULT_JETSTREAM_STREAM = 'STREAMGATE';
const DEFAULT_NATS_PORT = 4222;
/** JetStream stream names: no `.`, `*`, `>`, whitespace, path separators; this is the portable subset. */
const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)$/;

/** The address a `nats://` or `tls://` target names, or null when it is not an acceptable target. */
export function parseJetStreamTarget(raw: string): JetStreamTargetAddress | null {
  const match = /^(nats|tls):\/\/([^/?#]+)(?:\/([^/?#]*))?$/.exec(raw);
  if (match === null) return null;
  const [, scheme, authority = '', path = ''] = match;
  if (authority.includes('@')) return null;
  const stream = path === '' ? DEFAULT_JETSTREAM_STREAM : path;
  if (!STREAM_NAME.test(stream)) return null;
  const servers: string[] = [];
  for (const seed of authority.split(',')) {
    const server = parseSeed(seed);
    if (server === null) return null;
    if (!servers.includes(server)) servers.push(server);
  }
  return { kind: 'jetstream', tls: scheme === 'tls', servers, stream };
}

function parseSeed(seed: string): string | null {
  const match = /^(.*?)(?::([0-9]{1,5}))?$/.exec(seed);
  if (match === null) return null;
  const [, host = '', portText] = match;
  if (!HOST.test(host)) return null;
  const port = portText === undefined ? DEFAULT_NATS_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65_535 || (portText !== undefined && String(port) !== portText)) return null;
  return `${host.toLowerCase()}:${port}`;
}

/**
 * Canonical form, so that allowlist checks compare like with like: every seed with its port, the
 * stream always named (`nats://N1:4222` and `nats://n1/STREAMGATE` are one target). The seeds keep
 * their order: two lists of the same cluster in another order are two allowlist entries.
 */
export function normalizeJetStreamTarget(raw: string): string | null {
  const address = parseJetStreamTarget(raw);
  if (address === null) return null;
  return `${address.tls ? 'tls' : 'nats'}://${address.servers.join(',')}/${address.stream}`;
}

export function isJetStreamTarget(raw: string): boolean {
  return /^(nats|tls):\/\//.test(raw);
}
