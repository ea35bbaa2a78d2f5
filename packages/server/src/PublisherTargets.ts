import { isJetStreamTarget, maskRedisCredentials, normalizeRedisTarget, normalizeStreamTarget } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { JetStreamTargetWriters } from './JetStreamTargetWriters.js';
import type { JetStreamTargetSettings, JetStreamWriterLoad } from './JetStreamTargetWriters.js';
import { PublisherConnection } from './PublisherConnection.js';
import type { TargetConnectionOptions } from './PublisherConnection.js';

/** Where a publisher writes: a caller's client, or target URLs (Redis or JetStream) it connects to itself. */
export type PublisherDestination =
  | { kind: 'client'; client: RedisClient }
  | { kind: 'targets'; targets: readonly string[]; connection: TargetConnectionOptions; jetStream: JetStreamTargetSettings };

/** How a stream is written: on a Redis connection, or by its JetStream target's writer (loaded on first use). */
export type PublisherRoute =
  { kind: 'redis'; connection: PublisherConnection } | { kind: 'jetstream'; writer: Promise<JetStreamWriterLoad> };

const REDIS_URLS = 'a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL';
const ANY_URLS = `${REDIS_URLS}, or a nats:// or tls:// JetStream URL (seeds, then optionally /STREAM)`;

/**
 * Normalizes a list of Redis targets (normalizeRedisTarget), for what lives in Redis whatever a
 * stream's log (revocations); throws a TypeError naming a bad or repeated entry.
 */
export function normalizeTargetList(raw: string | readonly string[]): string[] {
  return normalizedList(raw, normalizeRedisTarget, REDIS_URLS, 'username and password');
}

/**
 * Normalizes a publisher's target list: Redis and JetStream targets (normalizeStreamTarget, the
 * token issuer's function, so both place a stream on the same target); throws a TypeError naming
 * a bad or repeated entry.
 */
export function normalizePublisherTargets(raw: string | readonly string[]): string[] {
  return normalizedList(raw, normalizeStreamTarget, ANY_URLS, 'username/password, or natsUsername/natsPassword for JetStream');
}

function normalizedList(
  raw: string | readonly string[],
  normalize: (raw: string) => string | null,
  accepted: string,
  credentials: string,
): string[] {
  // From plain JavaScript: anything but a string or an array is named, not iterated.
  if (typeof raw !== 'string' && !Array.isArray(raw))
    throw new TypeError(`targets must be a target URL or a list of them, got ${typeof raw}`);
  const list: unknown[] = typeof raw === 'string' ? [raw] : [...(raw as readonly unknown[])];
  if (list.length === 0) throw new TypeError('targets must name at least one target');
  const seen = new Set<string>();
  for (const [i, entry] of list.entries()) {
    const target = typeof entry === 'string' ? normalize(entry) : null;
    const field = typeof raw === 'string' ? 'targets' : `targets[${i}]`;
    // Messages go to logs: a URL carrying a password is shown without it.
    const shown = typeof entry === 'string' ? JSON.stringify(maskRedisCredentials(entry)) : typeof entry;
    if (target === null) throw new TypeError(`${field}: ${shown} is not ${accepted} without credentials (pass ${credentials} as options)`);
    if (seen.has(target)) throw new TypeError(`${field}: ${shown} is listed twice (as ${target})`);
    seen.add(target);
  }
  return [...seen];
}

/**
 * A publisher's connections, one per target, each stream on `placeStream(stream, targets)`: the
 * function the issuer uses, so a stream is written where its tokens say. A target's connection
 * is made on the first publish to a stream placed on it: a publisher given the fleet's whole list
 * connects only where it writes, and a target that is down costs nothing (not even a failed
 * connect at start) until a stream placed on it is published; publishes elsewhere never wait on it.
 */
export class PublisherTargets {
  private readonly connections = new Map<string, PublisherConnection>();
  private readonly jetStream: JetStreamTargetWriters | undefined;
  private readonly destination: PublisherDestination;
  private closed = false;

  constructor(destination: PublisherDestination) {
    this.destination = destination;
    // A caller's client is shared with other publishers: take a share now, so that its 'end'
    // closes this publisher too, as before there were target lists.
    if (destination.kind === 'client') this.connections.set('', PublisherConnection.acquire(destination.client));
    else if (destination.targets.some(isJetStreamTarget)) this.jetStream = new JetStreamTargetWriters(destination.jetStream);
  }

  /** The target a stream is written to; the empty string for a caller's client. */
  targetOf(stream: string): string {
    return this.destination.kind === 'client' ? '' : placeStream(stream, this.destination.targets);
  }

  /** How `stream` is written; null once closed. */
  routeFor(stream: string): PublisherRoute | null {
    if (this.closed) return null;
    const target = this.targetOf(stream);
    if (this.jetStream !== undefined && isJetStreamTarget(target)) return { kind: 'jetstream', writer: this.jetStream.writerFor(target) };
    let connection = this.connections.get(target);
    if (connection === undefined && this.destination.kind === 'targets') {
      connection = PublisherConnection.open(target, this.destination.connection);
      this.connections.set(target, connection);
    }
    return connection === undefined ? null : { kind: 'redis', connection };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...[...this.connections.values()].map((c) => c.release()), this.jetStream?.close()]);
  }
}
