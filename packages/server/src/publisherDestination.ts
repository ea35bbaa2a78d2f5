import { isJetStreamTarget } from '@streamgate/protocol';
import type { PublisherOptions } from './createPublisher.js';
import { clientKeyPrefix } from './PublisherConnection.js';
import { normalizePublisherTargets } from './PublisherTargets.js';
import type { PublisherDestination } from './PublisherTargets.js';

/*
 * Options that mean something on Redis targets only. Given to a publisher whose every target is
 * JetStream they are refused, naming what governs the same thing there, rather than ignored: a
 * caller who set them expects them to hold. In a list mixing both kinds they hold on its Redis
 * targets (the README says so).
 */
const REDIS_ONLY = {
  maxLen: "a JetStream stream's retention is its own config (max_msgs_per_subject: ensureJetStream's maxMsgsPerSubject)",
  idempotencyWindowSeconds:
    "a JetStream target remembers idempotency keys for its stream's duplicate_window (ensureJetStream's duplicateWindowMs)",
  username: 'pass natsUsername for JetStream targets',
  password: 'pass natsPassword for JetStream targets',
} as const;

/** What createPublisher's options say to write to; throws a TypeError naming a wrong option. */
export function publisherDestination(options: PublisherOptions, timeoutMs: number): PublisherDestination {
  // From plain JavaScript: name what is wrong rather than fail reading a property of undefined.
  const given = options as Record<string, unknown>;
  if ((given.redis === undefined) === (given.targets === undefined)) {
    throw new TypeError(
      `createPublisher needs exactly one of redis (an ioredis client) and targets (Redis or JetStream URLs); got ${given.redis === undefined ? 'neither' : 'both'}`,
    );
  }
  const nats = natsCredentials(given.natsUsername, given.natsPassword);
  if (options.targets === undefined) {
    if (nats !== undefined)
      throw new TypeError('natsUsername and natsPassword are for JetStream targets: a publisher given a redis client has none');
    const prefix = clientKeyPrefix(options.redis);
    if (prefix !== undefined) {
      // ioredis would prefix every key: entries would land where no relay reads (a stream's name
      // is its key, verbatim) and the record key could leave the stream's hash slot.
      throw new TypeError(`the publisher's Redis client must have no keyPrefix (got "${prefix}")`);
    }
    return { kind: 'client', client: options.redis };
  }
  const targets = normalizePublisherTargets(options.targets);
  if (targets.every(isJetStreamTarget)) {
    for (const [name, instead] of Object.entries(REDIS_ONLY)) {
      if (given[name] !== undefined)
        throw new TypeError(`${name} applies to Redis targets only, and every target is JetStream: ${instead}`);
    }
  }
  if (nats !== undefined && !targets.some(isJetStreamTarget)) {
    throw new TypeError('natsUsername and natsPassword apply to JetStream targets (nats://, tls://), and no target is one');
  }
  const { username, password, connectionName } = options;
  return {
    kind: 'targets',
    targets,
    connection: {
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
      ...(connectionName === undefined ? {} : { connectionName }),
    },
    jetStream: { credentials: nats, connectionName, timeoutMs },
  };
}

function natsCredentials(user: unknown, pass: unknown): { user: string; pass: string } | undefined {
  if (user === undefined && pass === undefined) return undefined;
  if (user === undefined || pass === undefined) {
    throw new TypeError(`${user === undefined ? 'natsUsername' : 'natsPassword'} is missing: give natsUsername and natsPassword together`);
  }
  if (typeof user !== 'string' || user === '') throw new TypeError('natsUsername must be a non-empty string');
  if (typeof pass !== 'string') throw new TypeError('natsPassword must be a string');
  return { user, pass };
}
