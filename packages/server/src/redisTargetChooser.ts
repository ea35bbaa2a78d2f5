import { normalizeStreamTarget } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';

/**
 * Which Redis a token names for a stream: one target for every stream; a list of instances, each
 * stream on `placeStream(stream, list)` (docs/protocol.md §16: the function publishers and ingest
 * use, so give them the same list); or the product's own choice per stream. Targets are
 * `redis://host:port/db`, `rediss://…`, a cluster `redis-cluster://seed:port`, or a NATS JetStream
 * target `nats://seed:port,seed:port/STREAM` (docs/protocol.md §17), without credentials (the
 * relay adds its own).
 */
export type RedisTargetChoice = string | readonly string[] | ((stream: string) => string);

/** A target in normalized form; throws a TypeError naming `what` when it is not one. */
export function redisTarget(raw: string, what: string): string {
  const target = normalizeStreamTarget(raw);
  if (target === null) {
    throw new TypeError(
      `${what} must be a redis:// or rediss:// URL with a host, optional port and db, a redis-cluster:// or rediss-cluster:// URL with a host and optional port, or a nats:// or tls:// JetStream URL with seeds and an optional stream, and no credentials (the relay adds its own); got "${raw}"`,
    );
  }
  return target;
}

/**
 * The choice as a function from stream name to normalized target. A target or a list is checked
 * now (a TypeError names the bad entry); a function's answers are checked on each call.
 */
export function redisTargetChooser(choice: RedisTargetChoice, what: string): (stream: string) => string {
  if (typeof choice === 'function') return (stream) => redisTarget(choice(stream), `${what}(${JSON.stringify(stream)})`);
  if (typeof choice === 'string') {
    const target = redisTarget(choice, what);
    return () => target;
  }
  if (choice.length === 0) throw new TypeError(`${what} must list at least one Redis target`);
  const list = choice.map((raw, i) => redisTarget(raw, `${what}[${i}]`));
  const repeated = list.find((t, i) => list.indexOf(t) !== i);
  if (repeated !== undefined) throw new TypeError(`${what} lists ${repeated} twice`);
  return (stream) => placeStream(stream, list);
}
