import { normalizeRedisTarget } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { PublisherConnection } from './PublisherConnection.js';
import type { TargetConnectionOptions } from './PublisherConnection.js';

/** Where a publisher writes: a caller's client, or target URLs it connects to itself. */
export type PublisherDestination =
  { kind: 'client'; client: RedisClient } | { kind: 'targets'; targets: readonly string[]; connection: TargetConnectionOptions };

/** Normalizes a target list (normalizeRedisTarget); throws a TypeError naming a bad or repeated entry. */
export function normalizeTargetList(raw: string | readonly string[]): string[] {
  const list = typeof raw === 'string' ? [raw] : [...raw];
  if (list.length === 0) throw new TypeError('targets must name at least one Redis target');
  const seen = new Set<string>();
  for (const entry of list) {
    const target = normalizeRedisTarget(entry);
    if (target === null) {
      throw new TypeError(
        `targets: "${entry}" is not a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL without credentials (pass username and password as options)`,
      );
    }
    if (seen.has(target)) throw new TypeError(`targets: "${entry}" is listed twice (as ${target})`);
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
  private readonly destination: PublisherDestination;
  private closed = false;

  constructor(destination: PublisherDestination) {
    this.destination = destination;
    // A caller's client is shared with other publishers: take a share now, so that its 'end'
    // closes this publisher too, as before there were target lists.
    if (destination.kind === 'client') this.connections.set('', PublisherConnection.acquire(destination.client));
  }

  /** The target a stream is written to; the empty string for a caller's client. */
  targetOf(stream: string): string {
    return this.destination.kind === 'client' ? '' : placeStream(stream, this.destination.targets);
  }

  /** The connection for `stream`; null once closed. */
  connectionFor(stream: string): PublisherConnection | null {
    if (this.closed) return null;
    const target = this.targetOf(stream);
    let connection = this.connections.get(target);
    if (connection === undefined && this.destination.kind === 'targets') {
      connection = PublisherConnection.open(target, this.destination.connection);
      this.connections.set(target, connection);
    }
    return connection ?? null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.release()));
  }
}
