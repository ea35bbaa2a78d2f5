import { startRedis } from './startRedis.js';
import type { RedisServer, StartRedisOptions } from './startRedis.js';

export interface RedisInstances extends AsyncDisposable {
  /** The servers, in start order; each is an independent startRedis() server. */
  readonly servers: readonly RedisServer[];
  /** `servers[i].url`, for config that lists several Redis instances. */
  readonly urls: readonly string[];
  /** Stops every server. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `count` independent private Redis servers in parallel (not a cluster: separate
 * keyspaces), for tests of sharding over several instances. If any fails to start, the others
 * are stopped and the first error is raised.
 */
export async function startRedisInstances(count: number, options?: StartRedisOptions): Promise<RedisInstances> {
  const results = await Promise.allSettled(Array.from({ length: count }, () => startRedis(options)));
  const servers = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.all(servers.map((server) => server.stop()));
    throw failure.reason;
  }
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  return { servers, urls: servers.map((server) => server.url), stop, [Symbol.asyncDispose]: stop };
}
